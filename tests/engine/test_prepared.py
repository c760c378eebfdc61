"""Prepared weights (`engine.loading.prepared`): a load keeps what it built, the next maps it and computes the same."""

from __future__ import annotations

import pytest
import torch

import engine.families.anchored_load
import engine.loading.tuning
from engine import DenoiseParams, Engine, InfillRequest
from engine.kernels.calibration import Calibration
from engine.kernels.projections import HALF, LINEAR, MAX_TABLE_ROWS
from engine.loading import prepared


def _half_everywhere(model) -> Calibration:
    """A calibration that picks the float16 copies for every product (what the bundled model gets on an AVX2
    CPU), so the file holds float32, float16 and merged matrices."""
    shapes = {p.shape_key for p in model.products()}
    return Calibration({s: (HALF,) * MAX_TABLE_ROWS for s in shapes}, {s: (LINEAR,) * MAX_TABLE_ROWS for s in shapes},
                       (1.0,) * MAX_TABLE_ROWS)


@pytest.fixture
def calibrated(monkeypatch, tmp_path):
    """Loads in a fresh cache folder, calibrated as the bundled model is on this CPU."""
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path))
    monkeypatch.setattr(engine.loading.tuning, "calibration_for", lambda model, device: (_half_everywhere(model), False))
    return tmp_path


def _request(engine: Engine) -> InfillRequest:
    sp, tok = engine.special, engine.tokenizer
    return InfillRequest([sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 8
                         + tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id])


def test_a_second_load_maps_what_the_first_built_and_writes_the_same(tiny_anchored, calibrated, monkeypatch):
    built = Engine.load(tiny_anchored, device="cpu")
    prepared.written()
    kept = list((calibrated / "prepared").glob("*.safetensors"))
    assert len(kept) == 1

    def no_build(*args, **kwargs):
        raise AssertionError("the prepared file was not used")

    monkeypatch.setattr(engine.families.anchored_load, "build_anchored", no_build)
    mapped = Engine.load(tiny_anchored, device="cpu")
    for ours, theirs in zip(mapped.loaded.model.products(), built.loaded.model.products()):
        assert ours.kernels == theirs.kernels
        assert ours.prepared().keys() == theirs.prepared().keys()
        assert all(torch.equal(ours.prepared()[k], v) for k, v in theirs.prepared().items())
    for (name, ours), theirs in zip(mapped.loaded.model.state_dict().items(), built.loaded.model.state_dict().values()):
        assert torch.equal(ours, theirs), name
    params = DenoiseParams(threshold=0.3)
    assert mapped.infill([_request(mapped)], params)[0].canvas == built.infill([_request(built)], params)[0].canvas


def test_a_broken_prepared_file_is_rebuilt(tiny_anchored, calibrated):
    expected = Engine.load(tiny_anchored, device="cpu")
    prepared.written()
    (kept,) = (calibrated / "prepared").glob("*.safetensors")
    kept.write_bytes(kept.read_bytes()[:1000])
    again = Engine.load(tiny_anchored, device="cpu")
    prepared.written()
    params = DenoiseParams(threshold=0.3)
    assert again.infill([_request(again)], params)[0].canvas == expected.infill([_request(expected)], params)[0].canvas
    assert kept.stat().st_size > 1000  # written again


def test_a_changed_adapter_is_not_served_from_the_old_file(tiny_anchored, calibrated, tmp_path_factory):
    import shutil

    from safetensors.torch import save_file

    from engine.families.anchored_load import ADAPTER_FILE
    from engine.loading.checkpoint import read_safetensors

    folder = tmp_path_factory.mktemp("changed") / "model"
    shutil.copytree(tiny_anchored, folder)
    first = Engine.load(folder, device="cpu")
    prepared.written()
    state = read_safetensors(folder / ADAPTER_FILE, torch.device("cpu"))
    state = {k: v + 0.5 if k.endswith(".B") else v for k, v in state.items()}
    save_file(state, str(folder / ADAPTER_FILE))
    second = Engine.load(folder, device="cpu")
    assert not torch.equal(first.loaded.model.products()[0].merged[HALF], second.loaded.model.products()[0].merged[HALF])


def test_an_uncalibrated_model_keeps_nothing(tiny_anchored, monkeypatch, tmp_path):
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path))
    Engine.load(tiny_anchored, device="cpu")
    prepared.written()
    assert not list(tmp_path.glob("prepared/*"))
