"""LLaDA family: LLaDA-8B-Base/-Instruct and LLaDA-1.5 (`model_type` "llada").

A Llama-like stack trained from scratch as a masked diffusion model: bidirectional, no biases, and
*same-position* logits (the logit at i predicts token i). Its checkpoints use OLMo-style names
(`model.transformer.blocks.N.q_proj`, `.attn_out`, `.ff_proj`/`.up_proj`/`.ff_out`, ...), which `rename`
maps onto the shared stack; in LLaDA's block the activated projection is `ff_proj` and `up_proj` is the
multiplier, i.e. our gate and up.
"""

from __future__ import annotations

import re
from typing import Any

from engine.models.transformer import ModelShape, Transformer

LOGITS_SHIFTED = False

_BLOCK_PARTS = {
    "attn_norm": "input_layernorm",
    "q_proj": "self_attn.q_proj",
    "k_proj": "self_attn.k_proj",
    "v_proj": "self_attn.v_proj",
    "attn_out": "self_attn.o_proj",
    "ff_norm": "post_attention_layernorm",
    "ff_proj": "mlp.gate_proj",
    "up_proj": "mlp.up_proj",
    "ff_out": "mlp.down_proj",
}
_TOP = {
    "model.transformer.wte.weight": "model.embed_tokens.weight",
    "model.transformer.ln_f.weight": "model.norm.weight",
    "model.transformer.ff_out.weight": "lm_head.weight",
}
_BLOCK = re.compile(r"model\.transformer\.blocks\.(\d+)\.(\w+)\.(weight|bias)")


def shape(cfg: dict[str, Any]) -> ModelShape:
    if cfg.get("block_type", "llama") != "llama":
        raise ValueError(f"LLaDA block_type {cfg.get('block_type')!r} is not supported (only 'llama')")
    return ModelShape(
        vocab_size=cfg.get("embedding_size") or cfg["vocab_size"],
        hidden_size=cfg["d_model"],
        intermediate_size=cfg["mlp_hidden_size"],
        num_hidden_layers=cfg["n_layers"],
        num_attention_heads=cfg["n_heads"],
        num_key_value_heads=cfg.get("n_kv_heads") or cfg["n_heads"],
        rms_norm_eps=cfg.get("rms_norm_eps", 1e-5),
        rope_theta=cfg.get("rope_theta", 10000.0),
        max_position_embeddings=cfg.get("max_sequence_length", 4096),
        qkv_bias=bool(cfg.get("include_bias") or cfg.get("include_qkv_bias")),
        tie_word_embeddings=bool(cfg.get("weight_tying", False)),
    )


def checkpoint_names(layers: int) -> dict[str, str]:
    """Our parameter name -> the LLaDA checkpoint's name (the inverse of `rename`), for writing one."""
    names = {ours: theirs for theirs, ours in _TOP.items()}
    for i in range(layers):
        for theirs, ours in _BLOCK_PARTS.items():
            names[f"model.layers.{i}.{ours}.weight"] = f"model.transformer.blocks.{i}.{theirs}.weight"
    return names


def rename(name: str) -> str:
    if name in _TOP:
        return _TOP[name]
    m = _BLOCK.fullmatch(name)
    if m and m.group(2) in _BLOCK_PARTS:
        return f"model.layers.{m.group(1)}.{_BLOCK_PARTS[m.group(2)]}.{m.group(3)}"
    return name


class LLaDAModel(Transformer):
    pass
