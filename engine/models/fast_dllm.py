"""Fast-dLLM v2 family (NVlabs; Fast_dLLM_v2_1.5B and _7B, adapted from Qwen2.5-Instruct), `model_type`
"Fast_dLLM_Qwen".

Qwen2 layout (q/k/v biases, GQA, RoPE) trained as block diffusion with blocks of `bd_size` tokens (32):
causal across blocks, bidirectional inside one. Logits are *shifted* ("token shift": the logit at i predicts
token i + 1), so a block's first token comes from the previous block's last row: the official sampler
writes it alone, by argmax, as soon as that block is complete, then denoises the rest of the block in
sub-blocks of 8 (`v2/generation_functions.py`). Parameter names are Qwen2's, loaded as they are.
"""

from __future__ import annotations

from typing import Any

from engine.models.block import BlockDecoding, BlockShape, qwen_shape
from engine.models.transformer import Transformer

MASK_TOKEN = "|<MASK>|"  # the mask token's text, when neither config nor tokenizer names it
LOGITS_SHIFTED = True
# `generate(..., block_size=32, small_block_size=8, threshold=1)`: one token a step, the most probable of
# the sub-block (no probability exceeds 1); the chatbot's threshold 0.9 is the fast rule's.
DECODING = BlockDecoding(default_block=32, sub_block=8, first_from_previous=True)


def shape(cfg: dict[str, Any]) -> BlockShape:
    block = int(cfg.get("bd_size") or DECODING.default_block)
    return qwen_shape(cfg, block, qkv_bias=True)


def rename(name: str) -> str:
    return name


class FastDLLMModel(Transformer):
    pass
