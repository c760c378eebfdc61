"""SDAR family (JetAstra; SDAR-1.7B/4B/8B-Chat and their -b8/-b16/-b32/-b64 variants), `model_type` "sdar".

Qwen3 layout (no q/k/v biases, a per-head RMSNorm on queries and keys before RoPE, an explicit head_dim)
trained as block diffusion: causal across blocks, bidirectional inside one, with *same-position* logits
(`JetAstra/SDAR` generate.py samples each block position from its own logit). Parameter names are
Qwen3's, loaded as they are. The block size is 4 unless the config says otherwise (`block_size`; the
-bN checkpoints need it set, or `--block N`). The MoE checkpoint (`sdar_moe`, 30B-A3B) is not supported.
"""

from __future__ import annotations

from typing import Any

from engine.models.block import BlockDecoding, BlockShape, qwen_shape
from engine.models.transformer import Transformer

MASK_TOKEN = "<|MASK|>"  # the mask token's text, when neither config nor tokenizer names it
LOGITS_SHIFTED = False
# generate.py's README evaluation: block 4, 4 denoising steps, `low_confidence_static` (one token a step).
DECODING = BlockDecoding(default_block=4)


def shape(cfg: dict[str, Any]) -> BlockShape:
    if cfg.get("attention_bias"):
        raise ValueError("SDAR with attention_bias is not supported (the released checkpoints have none)")
    block = int(cfg.get("block_size") or cfg.get("block_length") or DECODING.default_block)
    return qwen_shape(cfg, block, qkv_bias=False, qk_norm=True)


def rename(name: str) -> str:
    return name


class SDARModel(Transformer):
    pass
