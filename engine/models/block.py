"""What the block-diffusion families (SDAR, Fast-dLLM v2, LLaDA2.x) share: their shape with its block size,
and how their own samplers decode a block.

A block-diffusion checkpoint is causal across blocks of `block_size` tokens (blocks counted from the start
of the sequence) and bidirectional inside a block; the engine's block step (`engine/families/block_step.py`) and
commit policy (`engine/families/block_commit.py`) read these two records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.models.transformer import ModelShape


@dataclass(frozen=True)
class BlockDecoding:
    """A family's own sampler inside a block, at its published defaults.

    `sub_block`: candidates are the masks of the first sub-block (of this many tokens, counted from the
    block's start) that still holds one: Fast-dLLM v2's `small_block_size`; 0 = the whole block.
    `reference_threshold`: the official sampler commits every mask whose probability exceeds it when that
    is at least the step's count, else the step's count of most probable masks (SDAR's and LLaDA2's
    `low_confidence_dynamic`, Fast-dLLM v2's threshold); None: only the count (SDAR's static schedule).
    `first_from_previous`: a block's first token is the argmax of the previous block's last logit, written
    alone as soon as that block is complete (Fast-dLLM v2, whose logits are shifted).
    `steps_within_length`: the sampler runs at most as many steps per block as the generation has tokens
    (LLaDA2's `generate`: `steps = min(steps, gen_length)`, so a short generation commits more a step).
    """

    default_block: int
    sub_block: int = 0
    reference_threshold: float | None = None
    first_from_previous: bool = False
    steps_within_length: bool = False


@dataclass(frozen=True)
class BlockShape(ModelShape):
    """A model shape plus the checkpoint's block size."""

    block_size: int = 32


QWEN_KEYS = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
             "num_key_value_heads", "rms_norm_eps", "max_position_embeddings", "tie_word_embeddings", "head_dim")


def rope_theta(cfg: dict[str, Any], default: float) -> float:
    """`rope_theta` from an older config, or from transformers 5's `rope_parameters`."""
    params = cfg.get("rope_parameters") or {}
    return float(cfg.get("rope_theta") or params.get("rope_theta") or default)


def refuse_rope_scaling(cfg: dict[str, Any]) -> None:
    scaling = cfg.get("rope_scaling") or {}
    kind = scaling.get("rope_type", scaling.get("type")) if isinstance(scaling, dict) else None
    if kind not in (None, "default"):
        raise ValueError(f"rope scaling {kind!r} is not supported")


def qwen_shape(cfg: dict[str, Any], block_size: int, **fixed: Any) -> BlockShape:
    """A Qwen2/Qwen3-layout shape from a Hugging Face config.json (`fixed`: what the family decides)."""
    refuse_rope_scaling(cfg)
    if cfg.get("use_sliding_window"):
        raise ValueError("sliding-window attention is not supported")
    values = {k: cfg[k] for k in QWEN_KEYS if cfg.get(k) is not None}
    values.setdefault("num_key_value_heads", cfg["num_attention_heads"])
    if block_size < 1:
        raise ValueError(f"block size {block_size}: must be >= 1")
    return BlockShape(**values, rope_theta=rope_theta(cfg, 1_000_000.0), block_size=block_size, **fixed)
