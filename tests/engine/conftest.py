"""Fixtures of the anchored family's engine tests."""

from __future__ import annotations

import pytest

from engine import Engine


@pytest.fixture(scope="module")
def anchored(tiny_anchored) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


@pytest.fixture
def float32_keys(anchored, monkeypatch):
    """The cache in float32 whatever this CPU's default (`engine.cache.kv_dtype`), for tests that hold the
    cached forms to the uncached ones: to float rounding, or token for token at the tiny random model's
    near-ties, which keys rounded to bfloat16 part from."""
    monkeypatch.setattr(anchored.loaded, "kv_dtype", None)
