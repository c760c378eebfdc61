"""Documents' keys and values kept on disk across processes (`Engine.load(keep_documents=True)`,
`engine.cache.doc_store`): a new engine on the same cache folder skips the prefill of a document an earlier
one served, and writes what that one wrote."""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest

from engine import Engine, InfillRequest
from engine.cache.doc_store import DocStore
from engine.engine import _document_store

DOC = "file:///work/project/area.py"


def _request(engine: Engine) -> InfillRequest:
    sp, tok = engine.special, engine.tokenizer
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(12))
    canvas = ([sp.bos_id] + tok.encode(body + "def area(w, h):\n    return") + [sp.mask_id] * 6
              + tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id])
    return InfillRequest(canvas=canvas, doc_id=DOC)


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path))
    return tmp_path


def test_a_new_engine_reuses_what_an_earlier_one_kept_and_writes_the_same(tiny_anchored, cache):
    first = Engine.load(tiny_anchored, device="cpu", keep_documents=True)
    (written,) = first.infill([_request(first)])
    kept = list((cache / "documents").rglob("*.safetensors"))
    assert len(kept) == 1

    again = Engine.load(tiny_anchored, device="cpu", keep_documents=True)
    (reused,) = again.infill([_request(again)])
    fresh = Engine.load(tiny_anchored, device="cpu")  # keeps nothing, reads nothing
    (cold,) = fresh.infill([_request(fresh)])
    assert reused.canvas == written.canvas == cold.canvas
    assert reused.stats.prompt_positions < cold.stats.prompt_positions / 4, (reused.stats, cold.stats)


def test_closing_a_document_keeps_its_latest_keys(tiny_anchored, cache):
    engine = Engine.load(tiny_anchored, device="cpu", keep_documents=True)
    engine.infill([_request(engine)])
    store = _document_store(engine.loaded)
    first = store.load(DOC).ids
    edited = _request(engine)
    edited = replace(edited, canvas=[*edited.canvas[:-1], *engine.tokenizer.encode("print(1)\n"), engine.special.eos_id])
    engine.infill([edited])
    latest = engine.doc_cache.get(DOC).ids
    assert latest != first and store.load(DOC).ids == first  # written once per process while open...
    engine.forget(DOC)
    assert store.load(DOC).ids == latest  # ...and when closed


def test_an_unreadable_file_is_dropped_and_the_document_prefilled(tiny_anchored, cache):
    engine = Engine.load(tiny_anchored, device="cpu", keep_documents=True)
    store = _document_store(engine.loaded)
    store.folder.mkdir(parents=True)
    torn = store._path(DOC)
    torn.write_bytes(b"\x00" * 100)
    assert store.load(DOC) is None and not torn.exists()
    (result,) = engine.infill([_request(engine)])
    assert result.stats.prompt_positions >= len(_request(engine).canvas) - 8


def test_other_kernels_look_in_another_folder(tiny_anchored, cache):
    engine = Engine.load(tiny_anchored, device="cpu", keep_documents=True)
    loaded = engine.loaded
    before = _document_store(loaded).folder
    loaded.calibration = replace(loaded.calibration, wide="bfloat16")
    assert _document_store(loaded).folder != before


def test_a_folder_keeps_the_newest_documents(tmp_path):
    import torch

    from engine.cache.doc_cache import DocKV
    from engine.cache.doc_store import KEEP
    from engine.models.layers import LayerKV

    store = DocStore(tmp_path / "documents")
    kv = DocKV([1, 2, 3], [LayerKV(torch.zeros(1, 1, 3, 4), torch.ones(1, 1, 3, 4))], [(1, 2)], None)
    past = time.time() - 1000
    for i in range(KEEP + 2):
        store.save(f"file:///{i}.py", replace(kv, ids=[i, 2, 3]))
        os.utime(store._path(f"file:///{i}.py"), (past + i, past + i))  # apart even where mtimes are coarse
    assert len(list(store.folder.glob("*.safetensors"))) == KEEP
    assert store.load("file:///0.py") is None and store.load("file:///1.py") is None
    newest = store.load(f"file:///{KEEP + 1}.py")
    assert newest is not None and newest.ids == [KEEP + 1, 2, 3] and newest.spans == [(1, 2)]
    assert torch.equal(newest.layers[0].v, kv.layers[0].v)
