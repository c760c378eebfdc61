"""LLaDA2.x family (inclusionAI; LLaDA2.0-mini/-flash, LLaDA2.1-mini/-flash), `model_type` "llada2_moe".

Ling-v2 layout converted to block diffusion (blocks of 32, causal across blocks, bidirectional inside one)
with *same-position* logits: fused q/k/v (`attention.query_key_value`), a per-head RMSNorm on queries and
keys before RoPE, RoPE on the first `partial_rotary_factor` of each head, dense feed-forward blocks for the
first `first_k_dense_replace` layers and sparse mixtures of experts after (`engine/models/moe.py`). The
checkpoint's names (`model.word_embeddings`, `attention.dense`, `query_layernorm`, ...) are mapped onto the
shared stack by `rename`. LLaDA2.1's token editing (rewriting committed tokens) is not run: a block is
decoded mask to token, as LLaDA2.0's sampler does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from engine.kernels.projections import Adapt, FusedProjections, Projections
from engine.models.block import BlockDecoding, BlockShape, refuse_rope_scaling, rope_theta
from engine.models.layers import OUT, SwiGLU, fuse_mlp, fused_groups
from engine.models.moe import MoEShape, SparseMoE
from engine.models.transformer import Transformer

MASK_TOKEN = "<|mask|>"  # the mask token's text, when neither config nor tokenizer names it
LOGITS_SHIFTED = False
# The checkpoint's `generate(block_length=32, steps=32, threshold=0.95, minimal_topk=1)` (model card and
# the tech report's evaluation: temperature 0, block 32, threshold 0.95); it runs `min(steps, gen_length //
# minimal_topk)` steps per block.
DECODING = BlockDecoding(default_block=32, reference_threshold=0.95, steps_within_length=True)

_PARTS = {
    ".attention.query_key_value.": ".self_attn.query_key_value.",
    ".attention.dense.": ".self_attn.o_proj.",
    ".attention.query_layernorm.": ".self_attn.q_norm.",
    ".attention.key_layernorm.": ".self_attn.k_norm.",
}


NO_EXPERTS = MoEShape(experts=1, per_token=1, inner=1, shared=0)


@dataclass(frozen=True)
class LLaDA2Shape(BlockShape):
    moe: MoEShape = NO_EXPERTS
    dense_layers: int = 0  # first_k_dense_replace
    out_bias: bool = False  # use_bias: the attention output projection's


def shape(cfg: dict[str, Any]) -> BlockShape:
    refuse_rope_scaling(cfg)
    if cfg.get("norm_head"):
        raise ValueError("LLaDA2 with norm_head is not supported")
    if cfg.get("score_function", "sigmoid") != "sigmoid":
        raise ValueError(f"LLaDA2 router score_function {cfg.get('score_function')!r} is not supported")
    heads = cfg["num_attention_heads"]
    groups = int(cfg.get("n_group") or 1)
    moe = MoEShape(experts=int(cfg["num_experts"]), per_token=int(cfg["num_experts_per_tok"]),
                   inner=int(cfg["moe_intermediate_size"]), shared=int(cfg.get("num_shared_experts") or 0),
                   groups=groups, top_groups=int(cfg.get("topk_group") or groups),
                   scaling=float(cfg.get("routed_scaling_factor", 1.0)))
    return LLaDA2Shape(
        vocab_size=cfg["vocab_size"], hidden_size=cfg["hidden_size"], intermediate_size=cfg["intermediate_size"],
        num_hidden_layers=cfg["num_hidden_layers"], num_attention_heads=heads,
        num_key_value_heads=cfg.get("num_key_value_heads") or heads, rms_norm_eps=cfg.get("rms_norm_eps", 1e-6),
        rope_theta=rope_theta(cfg, 600_000.0), max_position_embeddings=cfg.get("max_position_embeddings", 32768),
        qkv_bias=bool(cfg.get("use_qkv_bias", False)), tie_word_embeddings=bool(cfg.get("tie_word_embeddings")),
        head_dim=cfg.get("head_dim") or cfg["hidden_size"] // heads, qk_norm=bool(cfg.get("use_qk_norm", True)),
        partial_rotary_factor=float(cfg.get("partial_rotary_factor", 1.0)),
        block_size=int(cfg.get("block_size") or cfg.get("block_length") or DECODING.default_block),
        moe=moe, dense_layers=int(cfg.get("first_k_dense_replace", 0)), out_bias=bool(cfg.get("use_bias", False)),
    )


def rename(name: str) -> str:
    if name == "model.word_embeddings.weight":
        return "model.embed_tokens.weight"
    for theirs, ours in _PARTS.items():
        name = name.replace(theirs, ours)
    return name


class _SplitQKV(Projections):
    """`Attention.qkv` for a checkpoint that stores q, k and v as one projection (`query_key_value`): one
    product, by `nn.Linear` or, after `fuse`, by `FusedProjections` (the calibrated kernels), split after it."""

    def __init__(self, linear: nn.Linear, sizes: list[int]) -> None:
        super().__init__(("query_key_value",), (linear,))
        self.sizes = sizes
        self.fused: FusedProjections | None = None

    def fuse(self) -> None:
        self.fused = FusedProjections(self.names, self.linears)  # type: ignore[arg-type]

    def __call__(self, x: torch.Tensor, adapt: Adapt | None, layer: int) -> tuple[torch.Tensor, ...]:
        (y,) = (self.fused or super().__call__)(x, adapt, layer)
        return torch.split(y, self.sizes, dim=-1)


class LLaDA2Model(Transformer):
    def __init__(self, shape: LLaDA2Shape) -> None:
        super().__init__(shape)
        hidden, dim = shape.hidden_size, self.head_dim
        sizes = [shape.num_attention_heads * dim] + [shape.num_key_value_heads * dim] * 2
        for i, block in enumerate(self.model.blocks()):
            attn = block.self_attn
            del attn.q_proj, attn.k_proj, attn.v_proj
            query_key_value = nn.Linear(hidden, sum(sizes), bias=shape.qkv_bias)
            attn.query_key_value = query_key_value
            attn.qkv = _SplitQKV(query_key_value, sizes)
            attn.o_proj = nn.Linear(sizes[0], hidden, bias=shape.out_bias)
            attn.out = Projections(OUT, (attn.o_proj,))
            if i >= shape.dense_layers:
                block.mlp = SparseMoE(hidden, shape.moe)

    def fuse_for_inference(self) -> None:
        """q/k/v (one projection already), o_proj, the dense layers' feed-forward and the vocabulary
        projection become `FusedProjections`; the experts of a mixture run apart, as `nn.Linear`s."""
        for block in self.model.blocks():
            attn = block.self_attn
            assert isinstance(attn.qkv, _SplitQKV)
            attn.qkv.fuse()
            attn.out = FusedProjections(OUT, (attn.o_proj,))
            if isinstance(block.mlp, SwiGLU):
                fuse_mlp(block.mlp)
        self.head = FusedProjections(("lm_head",), (self.lm_head,))

    def products(self) -> list[FusedProjections]:
        groups: list[FusedProjections] = []
        for block in self.model.blocks():
            qkv = block.self_attn.qkv
            groups += ([qkv.fused] if isinstance(qkv, _SplitQKV) and qkv.fused is not None else [])
            groups += fused_groups(block)
        return groups + ([self.head] if self.head is not None else [])
