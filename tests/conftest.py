"""Shared fixtures: tiny random checkpoints written in Hugging Face format, once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.checkpoints import make_tiny_checkpoint


@pytest.fixture(scope="module")
def float32_keys_everywhere():
    """`DCOMPLETE_KV=float32` for a module's engines, in-process and in every process it starts, for modules
    that hold two engines' outputs equal token for token where they batch or reuse documents differently:
    that moves logits by float rounding, and keys rounded to bfloat16 (`engine.cache.kv_dtype`) turn it
    into another token at the tiny random model's near-ties far more often than float32 keys do."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DCOMPLETE_KV", "float32")
        yield


@pytest.fixture(scope="session")
def tiny_dream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny_dream"), family="dream")


@pytest.fixture(scope="session")
def tiny_llada(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny_llada"), family="llada")


@pytest.fixture(scope="session")
def tiny_anchored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.checkpoints import make_tiny_anchored

    return make_tiny_anchored(tmp_path_factory.mktemp("tiny_anchored"))


@pytest.fixture(scope="session")
def tiny_block(tmp_path_factory: pytest.TempPathFactory):
    """A function family -> a tiny random block-diffusion checkpoint of that family (written once)."""
    from tests.support.block_checkpoints import make_tiny_block_checkpoint

    made: dict[str, Path] = {}

    def get(family: str) -> Path:
        if family not in made:
            # Fast-dLLM v2's blocks of 16 hold two of its sub-blocks of 8, DiffusionGemma's canvases are 16;
            # SDAR's and LLaDA2's blocks are 4.
            size = 16 if family in ("fast_dllm", "diffusion_gemma") else 4
            made[family] = make_tiny_block_checkpoint(tmp_path_factory.mktemp(f"tiny_{family}"), family,
                                                      block_size=size)
        return made[family]

    return get
