"""Compiled int8 decoding products (`engine.loading.compiled`, `engine.kernels.compiled_int8`) on the tiny
anchored model: a load with `compiled="int8"` serves on its eager kernels while a subprocess builds them,
the engine's idle pieces load, check and swap them in at once; a row's bits stay independent of the rows
beside it; a kept entry that is corrupt or from another machine is built again, and a build that fails
leaves the eager kernels serving.

The first build compiles for real (about 30 s of one core for the model's 9 products); the later ones reuse
inductor's cache that the first left, as a second process does.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest
from engine.kernels.compiled_int8 import Int8Weight
from engine.loading.compiled import INDUCTOR, MANIFEST, compiled_products, decoding_weight

PARAMS = DenoiseParams(threshold=0.3)
DEADLINE_S = 600  # a cold build on a busy machine; ~35 s alone


def _requests(engine: Engine) -> list[InfillRequest]:
    sp, tok = engine.special, engine.tokenizer
    return [InfillRequest([sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 8
                          + tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]),
            InfillRequest([sp.bos_id] + tok.encode("x = values[0]\ny = values[1]\nz = values[") + [sp.mask_id] * 6
                          + [sp.eos_id]),
            InfillRequest([sp.bos_id] + tok.encode("for i in range(") + [sp.mask_id] * 5 + tok.encode("):\n")
                          + [sp.eos_id])]


def _alone(engine: Engine) -> list[list[int]]:
    return [engine.infill([r], PARAMS)[0].canvas for r in _requests(engine)]


def _swap_in(engine: Engine) -> int:
    """Idle pieces until the background work is done; how many."""
    pieces, started = 0, time.monotonic()
    while engine.calibrate_step():
        pieces += 1
        assert time.monotonic() - started < DEADLINE_S, "the compiled products were never ready"
    return pieces


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("compiled_cache")


@pytest.fixture
def env(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DCOMPLETE_CACHE", str(cache))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return cache


def _entry(cache: Path) -> Path:
    (entry,) = list((cache / "compiled").iterdir())
    return entry


@pytest.fixture
def built(tiny_anchored, env: Path) -> Path:
    """`env` holding a built entry, as the first test leaves it; a test run alone builds one here."""
    if not list(env.glob(f"compiled/*/{MANIFEST}")):
        _swap_in(Engine.load(tiny_anchored, device="cpu", compiled="int8"))
    return env


def test_the_build_runs_in_the_background_and_swaps_in_at_once(tiny_anchored, env):
    eager = Engine.load(tiny_anchored, device="cpu")
    expected = _alone(eager)
    engine = Engine.load(tiny_anchored, device="cpu", compiled="int8")
    assert engine.calibrating  # building
    products = compiled_products(engine.loaded.model)
    assert _alone(engine) == expected  # served meanwhile, by the eager kernels
    assert all(p.compiled is None for p in products)
    engine.infill(_requests(engine)[:1], PARAMS.with_(cache="fixed"))
    assert _swap_in(engine) > 0 and not engine.calibrating
    assert all(p.compiled is not None for p in products)
    assert len(engine.doc_cache) == 0  # keys and values of the eager kernels are not reused
    assert json.loads((_entry(env) / MANIFEST).read_text())["products"] == len(products)

    # A compiled product is the int8 product of the decoding weight: off the float32 product by at most what
    # rounding the weight to its int8 codes (half a scale step) and the rows to bfloat16 can move it.
    x = torch.randn(1, 16, products[0].weight.shape[1], generator=torch.Generator().manual_seed(1))
    for p in products:
        x = torch.randn(1, 16, p.weight.shape[1], generator=torch.Generator().manual_seed(1))
        w = decoding_weight(p)
        int8 = Int8Weight.of(w)
        exact = x[0] @ w.T
        bound = x[0].abs() @ (int8.scales.float()[:, None] / 2 + w.abs() * 2**-8).T
        assert p.compiled is not None
        got = p.compiled(x)[0]
        assert ((got - exact).abs() <= bound * 1.01 + 1e-5).all()
        # rows beside others get the bits they get alone
        alone = torch.cat([p.compiled(x[:, i : i + 1].contiguous()) for i in range(16)], 1)[0]
        assert torch.equal(got, alone)

    # the engine's contract: a request gets the same tokens alone or batched with others
    filled = _alone(engine)
    assert [r.canvas for r in engine.infill(_requests(engine), PARAMS)] == filled
    assert all(engine.special.mask_id not in canvas for canvas in filled)


@pytest.mark.parametrize("damage", ["corrupt", "foreign"])
def test_a_kept_entry_that_is_corrupt_or_foreign_is_built_again(tiny_anchored, built, damage):
    manifest = _entry(built) / MANIFEST
    if damage == "corrupt":
        manifest.write_text(manifest.read_text()[:20])
    else:
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "cpu": "another CPU",
                                        "flags": ["avx2"]}))
    engine = Engine.load(tiny_anchored, device="cpu", compiled="int8")
    assert engine.calibrating
    _swap_in(engine)
    assert all(p.compiled is not None for p in compiled_products(engine.loaded.model))
    assert engine.loaded.model.head.compiled is None  # the logits stay on the eager kernel
    assert json.loads(manifest.read_text())["cpu"] != "another CPU"
    filled = _alone(engine)
    assert [r.canvas for r in engine.infill(_requests(engine), PARAMS)] == filled


def test_a_broken_cache_and_a_failing_compiler_leave_the_eager_kernels_serving(tiny_anchored, built, monkeypatch,
                                                                                  caplog):
    expected = _alone(Engine.load(tiny_anchored, device="cpu"))
    for path in (_entry(built) / INDUCTOR).rglob("*"):
        if path.is_file() and "fxgraph" in path.parts:
            path.write_bytes(b"not a graph")
    monkeypatch.setenv("CXX", "/bin/false")  # the rebuild's compiler fails
    caplog.set_level(logging.WARNING, logger="engine.loading.compiled")
    engine = Engine.load(tiny_anchored, device="cpu", compiled="int8")
    _swap_in(engine)
    assert all(p.compiled is None for p in engine.loaded.model.products())
    assert not engine.calibrating and _alone(engine) == expected
    said = [r.getMessage() for r in caplog.records]
    assert any("building it again" in s for s in said), said
    assert any("serving on the eager kernels" in s for s in said), said
    assert not (_entry(built) / MANIFEST).exists()


def test_a_machine_that_cannot_build_serves_eager_with_one_line(tiny_anchored, env, monkeypatch, caplog):
    monkeypatch.setenv("CXX", "/no/such/compiler")
    caplog.set_level(logging.WARNING, logger="engine.loading.compiled")
    engine = Engine.load(tiny_anchored, device="cpu", compiled="int8")
    assert not engine.calibrating
    assert [r.getMessage() for r in caplog.records if "compiled" in r.getMessage()] == [
        "compiled products (int8): no C++ compiler (/no/such/compiler); serving on the eager kernels"]
    with pytest.raises(Exception, match="compiled 'fast': use one of off, int8, auto"):
        Engine.load(tiny_anchored, device="cpu", compiled="fast")
