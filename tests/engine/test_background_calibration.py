"""A first load serves at once with a default calibration and measures this machine's kernels between
requests (`engine.loading.tuning`): requests answered meanwhile get what the default gives, the swap at the
end gives what a new process with the kept calibration gives, and a changed machine measures again instead
of failing. `DCOMPLETE_CALIBRATION=always` makes the tiny test model (small enough to stay in the CPU's
caches, which is otherwise never measured) take the same path as the bundled one."""

from __future__ import annotations

import json
import time

import pytest
import torch

import engine.loading.tuning
from engine import DenoiseParams, Engine, InfillRequest
from engine.batcher import Batcher
from engine.kernels.calibration import UNMEASURED
from engine.loading import prepared
from engine.loading.calibrate import row_invariant
from engine.loading.tuning import DEFAULT_ROW_COST
from tests.support.checkpoints import make_tiny_anchored

PARAMS = DenoiseParams(threshold=0.3)


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path))
    monkeypatch.setenv("DCOMPLETE_CALIBRATION", "always")
    return tmp_path


def _requests(engine: Engine) -> list[InfillRequest]:
    sp, tok = engine.special, engine.tokenizer
    return [InfillRequest([sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 8
                          + tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]),
            InfillRequest([sp.bos_id] + tok.encode("x = values[0]\ny = values[1]\nz = values[") + [sp.mask_id] * 8
                          + [sp.eos_id], doc_id="doc")]


def _fill(engine: Engine) -> list[list[int]]:
    return [engine.infill([r], PARAMS)[0].canvas for r in _requests(engine)]


def _state(engine: Engine) -> list[tuple]:
    return [(p.kernels, p.wide, p.mixed, p.steady_rows, sorted(p.low), sorted(p.merged))
            for p in engine.loaded.model.products()]


def test_a_first_load_serves_with_a_default_and_measures_between_requests(tiny_anchored, cache):
    first = Engine.load(tiny_anchored, device="cpu")
    assert first.calibrating and first.loaded.calibration.row_cost == DEFAULT_ROW_COST
    products = first.loaded.model.products()
    decoding = products[0].kernels[0]
    assert row_invariant(products, decoding)  # the default keeps a row's bits beside other rows
    assert not list(cache.glob("calibration/*.json")) and not list(cache.glob("prepared/*"))
    before, serving = _fill(first), _state(first)
    pieces = 0
    while first.calibrate_step():
        pieces += 1
        if pieces % 25 == 0:  # requests between pieces are served by the default kernels, untouched
            assert _fill(first) == before and _state(first) == serving
    assert pieces > 50 and not first.calibrating
    measured = first.loaded.calibration
    assert measured != UNMEASURED and measured.row_cost != DEFAULT_ROW_COST
    assert first.loaded.drafting.row_cost == measured.row_cost
    assert len(first.doc_cache) == 0  # keys and values of the old kernels are not reused
    after = _fill(first)
    prepared.written()
    assert len(list(cache.glob("calibration/*.json"))) == 1 and len(list(cache.glob("prepared/*.safetensors"))) == 1

    mapped = Engine.load(tiny_anchored, device="cpu")  # a new process: the prepared file
    assert not mapped.calibrating and mapped.loaded.calibration == measured
    assert _state(mapped) == _state(first) and _fill(mapped) == after
    for path in cache.glob("prepared/*"):
        path.unlink()
    built = Engine.load(tiny_anchored, device="cpu")  # a new process: built, the kept calibration applied
    assert not built.calibrating and _state(built) == _state(first) and _fill(built) == after
    for ours, theirs in zip(built.loaded.model.products(), first.loaded.model.products()):
        assert all(torch.equal(ours.prepared()[k], v) for k, v in theirs.prepared().items())


def test_a_changed_machine_serves_with_the_default_and_measures_again(tiny_anchored, cache, monkeypatch):
    measured = Engine.load(tiny_anchored, device="cpu")
    while measured.calibrate_step():
        pass
    prepared.written()
    expected = _fill(Engine.load(tiny_anchored, device="cpu"))
    monkeypatch.setattr(engine.loading.tuning, "cpu_name", lambda: "another CPU")  # in both files' keys
    moved = Engine.load(tiny_anchored, device="cpu")
    assert moved.calibrating and moved.loaded.calibration.row_cost == DEFAULT_ROW_COST
    moved_default = _fill(moved)
    while moved.calibrate_step():
        pass
    prepared.written()
    assert len(list(cache.glob("calibration/*.json"))) == 2
    assert _fill(moved) == _fill(Engine.load(tiny_anchored, device="cpu"))
    monkeypatch.undo()
    monkeypatch.setenv("DCOMPLETE_CACHE", str(cache))
    monkeypatch.setenv("DCOMPLETE_CALIBRATION", "always")
    again = Engine.load(tiny_anchored, device="cpu")
    assert not again.calibrating and _fill(again) == expected
    assert moved_default  # answered before its measurement began


def test_a_broken_calibration_file_is_measured_again(tiny_anchored, cache):
    first = Engine.load(tiny_anchored, device="cpu")
    while first.calibrate_step():
        pass
    prepared.written()
    for path in [*cache.glob("prepared/*"), *cache.glob("calibration/*.json")]:
        path.write_text(json.dumps({"version": "x"}) if path.suffix == ".json" else "broken")
    again = Engine.load(tiny_anchored, device="cpu")
    assert again.calibrating and _fill(again)


def test_the_batcher_measures_while_no_call_waits(tiny_anchored, cache):
    engine = Engine.load(tiny_anchored, device="cpu")
    expected = _fill(engine)
    batcher = Batcher(engine)
    try:
        request = _requests(engine)[0]
        assert batcher.infill([request], PARAMS)[0].canvas == expected[0]
        deadline = time.monotonic() + 300
        while engine.calibrating and time.monotonic() < deadline:
            assert batcher.infill([request], PARAMS)[0].canvas == expected[0]
            time.sleep(1.0)
        assert not engine.calibrating
    finally:
        batcher.close()


def test_a_load_that_builds_the_model_again_reads_the_calibration_measured_with_the_file_s_blocks(tmp_path, cache,
                                                                                                   monkeypatch):
    """The measurement drops the kernels it did not pick (here the checkpoint's 4-bit blocks). What it keeps is
    named as the load named it before that, so a load that builds the model again (its prepared weights gone:
    a new version of dcomplete, a changed adapter) reads it instead of measuring the machine again."""
    folder = make_tiny_anchored(tmp_path / "q4", blocks="Q4_1")

    def measuring(model):  # a measurement that picks float kernels everywhere, in two pieces
        yield
        return engine.loading.tuning.default_calibration(model.products())

    monkeypatch.setattr(engine.loading.tuning, "measuring", measuring)
    first = Engine.load(folder, device="cpu")
    products = [p for p in first.loaded.model.products() if p.names != ("lm_head",)]  # the head is float32
    assert first.calibrating and all(p.blocks is not None for p in products)
    while first.calibrate_step():
        pass
    assert all(p.blocks is None for p in products)
    prepared.written()
    for path in cache.glob("prepared/*"):
        path.unlink()
    built = Engine.load(folder, device="cpu")
    assert not built.calibrating and built.loaded.calibration == first.loaded.calibration
