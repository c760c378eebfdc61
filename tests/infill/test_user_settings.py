"""One home for what users' settings mean: the sampler presets and the token cap every front door uses."""

from __future__ import annotations

import pytest

from engine import DenoiseParams
from infill.spots import Spot
from infill.user_settings import cap_tokens, denoise_params


def test_presets_and_given_fields() -> None:
    assert denoise_params() == DenoiseParams.fast()
    assert denoise_params(threshold=0.8, block=None, seed=None) == DenoiseParams.fast(0.8)
    assert denoise_params("reference", steps=5, alg="entropy") == DenoiseParams.reference(5, alg="entropy")
    # the language server's `steps` setting: the family's schedule, keeping the fast preset's cache
    assert denoise_params(steps=4, rule="reference", temperature=0.0, seed=0) == DenoiseParams(steps=4, rule="reference")
    with pytest.raises(ValueError, match="threshold must be in"):
        denoise_params(threshold=1.5)
    with pytest.raises(ValueError, match="block needs the threshold rule"):
        denoise_params("reference", block=8)


def test_the_cap_bounds_masks_and_growth() -> None:
    long, short = Spot(0, 0, 100, "block"), Spot(0, 0, 10, "line")
    assert cap_tokens([[long]], 64) == ([(Spot(0, 0, 64, "block"),)], 0)
    assert cap_tokens([[short]], 64) == ([(short,)], 54)
    assert cap_tokens([[short], [Spot(0, 0, 20, "line")]], 64)[1] == 44  # one call: what the largest has left
    assert cap_tokens([[short, long]], 64) == ([(short, Spot(0, 0, 64, "block"))], None)  # per-spot growth
    assert cap_tokens([[long]], None) == ([(long,)], None)
