"""The bidirectional decoder stack every supported family runs, under Qwen2-style parameter names.

Families with other checkpoint names (LLaDA) map their names onto these at load time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar, cast

import torch
from torch import nn

from engine.kernels.projections import FusedProjections
from engine.models.layers import Block, ForwardContext, RMSNorm, fuse_projections, fused_groups, rotary_tables

M = TypeVar("M", bound=nn.Module)
_INITS = ("normal_", "uniform_", "kaiming_uniform_", "zeros_", "ones_")


@contextlib.contextmanager
def _no_init() -> Iterator[None]:
    saved = {name: getattr(nn.init, name) for name in _INITS}
    try:
        for name in _INITS:
            setattr(nn.init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, fn in saved.items():
            setattr(nn.init, name, fn)


def on_meta(build: Callable[[], M]) -> M:
    """`build()` on the meta device, skipping parameter initialisation (the checkpoint's tensors replace
    it): on meta tensors `normal_` runs a slow reference kernel, 3 s of CPU for SmolLM2's embedding."""
    with torch.device("meta"), _no_init():
        return build()


@dataclass(frozen=True)
class ModelShape:
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    max_position_embeddings: int = 2048
    qkv_bias: bool = True
    tie_word_embeddings: bool = False
    head_dim: int | None = None  # None: hidden_size / num_attention_heads
    qk_norm: bool = False  # per-head RMSNorm of queries and keys before RoPE (Qwen3, LLaDA2)
    partial_rotary_factor: float = 1.0  # the share of each head RoPE rotates (LLaDA2: 0.5)

    def __post_init__(self) -> None:
        if self.head_dim is None and self.hidden_size % self.num_attention_heads:
            raise ValueError("hidden_size must be a multiple of num_attention_heads")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")


class Backbone(nn.Module):
    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(shape.vocab_size, shape.hidden_size)
        self.layers = nn.ModuleList(
            Block(
                shape.hidden_size,
                shape.num_attention_heads,
                shape.num_key_value_heads,
                shape.intermediate_size,
                shape.rms_norm_eps,
                shape.qkv_bias,
                head_dim=shape.head_dim,
                qk_norm=shape.qk_norm,
            )
            for _ in range(shape.num_hidden_layers)
        )
        self.norm = RMSNorm(shape.hidden_size, shape.rms_norm_eps)

    def blocks(self) -> list[Block]:
        """`layers` as the `Block`s they are (an `nn.ModuleList` yields plain `nn.Module`s)."""
        return [cast(Block, block) for block in self.layers]


class Transformer(nn.Module):
    """`forward` returns raw logits (B, T, V) at the input positions, or (M, V) at the input positions
    `logits_at` = (rows, cols) only; which token a logit predicts (the same position, or the next one)
    is the family's convention, applied by the sampler."""

    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        self.shape = shape
        self.model = Backbone(shape)
        self.lm_head = nn.Linear(shape.hidden_size, shape.vocab_size, bias=False)
        self.head: FusedProjections | None = None
        if shape.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def fuse_for_inference(self) -> None:
        for block in self.model.blocks():
            fuse_projections(block)
        self.head = FusedProjections(("lm_head",), (self.lm_head,))

    def products(self) -> list[FusedProjections]:
        """Every fused product of a forward (after `fuse_for_inference`): the blocks', then the head."""
        groups = [g for block in self.model.blocks() for g in fused_groups(block)]
        return groups + ([self.head] if self.head is not None else [])

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        x: torch.Tensor = self.model.embed_tokens(input_ids)
        return x

    @property
    def input_vocab(self) -> int:
        """Token ids a canvas may hold."""
        return self.shape.vocab_size

    @property
    def head_dim(self) -> int:
        return self.shape.head_dim or self.shape.hidden_size // self.shape.num_attention_heads

    @property
    def rotary_dim(self) -> int:
        """The dimensions of each head RoPE rotates (all of them unless the family rotates part)."""
        return int(self.head_dim * self.shape.partial_rotary_factor)

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor | None = None,
        key_mask: torch.Tensor | None = None,
        ctx: ForwardContext | None = None,
        logits_at: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        if positions is None:
            positions = torch.arange(input_ids.shape[1], device=input_ids.device).expand_as(input_ids)
        x = self.embed(input_ids)
        rope = rotary_tables(positions, self.rotary_dim, self.shape.rope_theta, x.dtype)
        if ctx is not None and key_mask is None:
            key_mask = ctx.key_mask
        for i, layer in enumerate(self.model.layers):
            x = layer(x, rope, key_mask, ctx, i)
        if logits_at is not None:
            x = x[logits_at]  # the vocabulary projection is the costliest layer of a small model
        return self.project(self.model.norm(x))

    def project(self, h: torch.Tensor) -> torch.Tensor:
        """The vocabulary projection, by the kernel for its row count once fused (`FusedProjections`)."""
        if self.head is None:
            logits: torch.Tensor = self.lm_head(h)
            return logits
        return self.head.product(h, self.head.width)
