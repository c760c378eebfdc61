"""Transformer blocks shared by the model families: RMSNorm, rotary embeddings, attention, SwiGLU.

Every family here is a pre-norm decoder stack run *without* a causal mask. The families differ only in
parameter names and in which position a logit predicts, so they assemble these blocks under their own
names (see dream.py, llada.py).

Attention reads and writes an optional `LayerKV` so the denoising loop can cache the keys and values of
fixed text: a full forward stores K/V for every position; a partial forward runs only some positions as
queries, writes their fresh K/V into the cache at those positions and attends over the whole cache.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from engine.kernels import row_attention, row_ops
from engine.kernels.projections import Adapt as ProductAdapt
from engine.kernels.projections import FusedProjections, Projections


class Projector(Protocol):
    """What a block calls for a group of projections of one input: `Projections`, `FusedProjections`,
    or their int8 form (`engine.kernels.int8.Int8Projections`), one output per name."""

    names: tuple[str, ...]

    def __call__(self, x: torch.Tensor, adapt: Adapt | None, layer: int) -> tuple[torch.Tensor, ...]: ...

QKV = ("q_proj", "k_proj", "v_proj")
OUT = ("o_proj",)
GATE_UP = ("gate_proj", "up_proj")
DOWN = ("down_proj",)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self.native: row_ops.RowOps | None = None  # dcomplete's norm, given by a CPU load

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.native is not None and row_ops.usable(x, self.weight):
            return self.native.norm(x, self.weight, self.eps)
        if x.dtype == torch.float32 and self.weight.dtype == torch.float32:
            # torch's fused kernel: the same bits as the composed form below, in one op instead of six
            # (61 norms per forward: 1.6 ms of a 40 ms decoding step on a CPU)
            return F.rms_norm(x, self.weight.shape, self.weight, self.eps)
        dtype = x.dtype
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(dtype)


def rotary_tables(positions: torch.Tensor, head_dim: int, theta: float,
                  dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin tables [B, 1, T, head_dim] for the rotate-half RoPE convention (Qwen2, Llama, LLaDA), the
    sin table's first half negated: `apply_rotary` then rotates by one roll instead of a negation and a
    concatenation (the same bits: negating is exact)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=positions.device).float() / head_dim))
    freqs = positions.float()[..., None] * inv_freq  # (B, T, head_dim/2)
    cos, sin = freqs.cos(), freqs.sin()
    return torch.cat((cos, cos), dim=-1)[:, None].to(dtype), torch.cat((-sin, sin), dim=-1)[:, None].to(dtype)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate `x` by `rotary_tables`' tables; tables narrower than the head rotate its first dimensions
    only (partial rotary, as LLaDA2's `partial_rotary_factor`), the rest passes through."""
    if cos.shape[-1] < x.shape[-1]:
        width = cos.shape[-1]
        return torch.cat((apply_rotary(x[..., :width], cos, sin), x[..., width:]), dim=-1)
    half = x.shape[-1] // 2  # the halves swapped: roll by half a head, in one op instead of a cut and a cat
    return x * cos + x.view(*x.shape[:-1], 2, half).flip(-2).view(x.shape) * sin


def rotated_by(k: torch.Tensor, shift: torch.Tensor, rotary_dim: int, theta: float) -> torch.Tensor:
    """Keys `k` (B, H, T, D) as if computed `shift` (B or 1, T) positions further on, in k's dtype: rotated
    in float32, so that keys kept in bfloat16 (`engine.cache.kv_dtype`) are rounded once, not at each step
    of the rotation."""
    return rotated_with(k, *rotary_tables(shift, rotary_dim, theta, torch.float32))


def rotated_with(k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """`rotated_by` with its float32 tables made once (`rotary_tables`), for shifts every layer shares."""
    return apply_rotary(k.float(), cos, sin).to(k.dtype)


@dataclass
class LayerKV:
    """Cached keys/values of one layer, (B, H_kv, S, D), post-RoPE, for every canvas position."""

    k: torch.Tensor
    v: torch.Tensor


class Adapt(ProductAdapt, Protocol):
    """What a model family adds to the shared blocks (the anchored family's adapter): a change to each
    projection's output (`ProductAdapt`: `project`, or a low-rank update folded into fused projections
    applied to the flattened `rows`), and each layer's attention (`attend`, by its mask). `every_row`: every
    query row is a gap row (a decoding step; `rows` then lists them all, or none with the adapter off)."""

    def attend(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The attention (B, H, Q, D) of queries `q` over keys `k` and values `v` in `layer`, by the
        family's mask."""
        ...


@dataclass
class ForwardContext:
    """What a forward pass does with the cache; built by the caller, read only by `Attention`.

    - `query_index=None`: full forward; K/V of every position are stored in `layers`.
    - `query_index` given: the inputs are the canvas positions `query_index` (B, Tq); their K/V are
      written into the cache at those positions and attention runs over the whole cached canvas.
    `key_mask` (B, S) marks real (non-pad) keys; None means every key is real. `adapt`, when given,
    changes the projections and supplies each layer's attention mask (which then replaces `key_mask`).
    `attn_mask` (B, 1, Q, S), when given, is every layer's attention mask (bool or additive float), in place
    of `key_mask`: the block-causal families' mask (engine/families/block_step.py).
    """

    layers: list[LayerKV | None]
    key_mask: torch.Tensor | None = None
    query_index: torch.Tensor | None = None
    adapt: Adapt | None = None
    attn_mask: torch.Tensor | None = None
    run: tuple[int, int] | None = field(default=None, init=False)
    """The query positions as a slice, when they are one run of consecutive positions in every row (a
    decoding step): the cache is then written by a copy into the slice instead of a scatter per layer."""

    def __post_init__(self) -> None:
        q = self.query_index
        if q is not None and q.numel() and not q.is_cuda:
            first, last = int(q[0, 0]), int(q[0, -1])
            if last - first + 1 == q.shape[1] and bool((q == torch.arange(first, last + 1)).all()):
                self.run = (first, last + 1)

    def keys(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The keys/values the queries attend to, after recording the queries' own."""
        if self.query_index is None:
            self.layers[layer] = LayerKV(k, v)
            return k, v
        cached = self.layers[layer]
        assert cached is not None, "a partial forward needs a cache filled by a full forward"
        if self.run is not None:
            cached.k[:, :, self.run[0] : self.run[1]] = k
            cached.v[:, :, self.run[0] : self.run[1]] = v
            return cached.k, cached.v
        index = self.query_index[:, None, :, None].expand(-1, k.shape[1], -1, k.shape[3])
        cached.k.scatter_(2, index, k.to(cached.k.dtype))
        cached.v.scatter_(2, index, v.to(cached.v.dtype))
        return cached.k, cached.v


class Attention(nn.Module):
    """Multi-head attention with GQA and RoPE. `head_dim` defaults to hidden / heads (Qwen3 and LLaDA2 set
    their own); `q_norm` / `k_norm`, when a family sets them, are per-head RMSNorms applied before RoPE
    (Qwen3's QK-norm)."""

    def __init__(self, hidden: int, heads: int, kv_heads: int, qkv_bias: bool, out_bias: bool = False,
                 head_dim: int | None = None) -> None:
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = head_dim or hidden // heads
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=qkv_bias)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=qkv_bias)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=qkv_bias)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=out_bias)
        self.qkv: Projector = Projections(QKV, (self.q_proj, self.k_proj, self.v_proj))
        self.out: Projector = Projections(OUT, (self.o_proj,))
        self.q_norm: nn.Module | None = None
        self.k_norm: nn.Module | None = None
        self.native: row_ops.RowOps | None = None  # dcomplete's rotation, given by a CPU load

    def forward(
        self,
        x: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor],
        key_mask: torch.Tensor | None,
        ctx: ForwardContext | None,
        layer: int,
    ) -> torch.Tensor:
        b, t, _ = x.shape
        adapt = ctx.adapt if ctx is not None else None
        q, k, v = self.qkv(x, adapt, layer)
        q = q.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.q_norm is not None and self.k_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        cos, sin = rope
        if self.native is not None and row_ops.rotatable(q, cos, sin) and row_ops.rotatable(k, cos, sin):
            q, k = self.native.rotate(q, cos, sin), self.native.rotate(k, cos, sin)
        else:
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        if ctx is not None:
            k, v = ctx.keys(layer, k, v)
        q = q.to(k.dtype)  # a cache may keep keys narrower than the model computes (`engine.cache.kv_dtype`)
        if adapt is not None:
            out = adapt.attend(layer, q, k, v)
        else:
            mask = ctx.attn_mask if ctx is not None else None
            if mask is None and key_mask is not None:
                mask = key_mask[:, None, None, :]  # (B, 1, 1, S)
            out = sdpa(q, k, v, mask)
        out = out.transpose(1, 2).reshape(b, t, -1).to(x.dtype)
        return self.out(out, adapt, layer)[0]


def sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None,
         is_causal: bool = False) -> torch.Tensor:
    """Scaled dot-product attention of q (B, H, Q, D) over k, v (B, H_kv, S, D), grouped-query when
    H_kv < H."""
    gqa = k.shape[1] != q.shape[1]
    if gqa and mask is not None and q.is_cuda:
        # CUDA's memory-efficient kernel (the one that takes a padding mask) has no GQA support.
        groups = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        gqa = False
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal, enable_gqa=gqa)


def decoding_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                       mask: torch.Tensor | None = None) -> torch.Tensor:
    """Attention for a decoding step's few query rows that gives each row the bits it gets alone.

    A decoding step's rows must get the logits one-token-per-step decoding gives them, or verified drafting
    parts from it at a near-tie; torch's fused CPU kernel rounds a query row otherwise among several rows
    than alone (1e-7 apart, measured). Where a load installed dcomplete's C kernel
    (`engine.kernels.row_attention`: AVX-512 BF16 CPUs), one call a layer does it, every row apart by
    construction. Otherwise two products and a softmax (`attention_by_products`) read the keys once for all
    rows and keep a row's bits where this machine's matrix library does not round by row count (checked once
    per process, `_products_keep_rows`: the AMX Xeon); elsewhere the same products run on blocks of exactly
    ROW_BLOCK rows (`attention_by_row_blocks`), one shape for every call. On CUDA, the fused kernel."""
    if q.is_cuda:
        return sdpa(q, k, v, mask)
    native = row_attention.attend(q, k, v, mask)
    if native is not None:
        return native
    return (attention_by_products if _products_keep_rows(k.dtype) else attention_by_row_blocks)(q, k, v, mask)


ROW_BLOCK = 2
"""Query rows of every product `attention_by_row_blocks` runs. On the Zen 4 EPYC (1,024 keys, 2 threads,
float32) blocks of 2 cost 115 / 121 / 223 / 1,009 us a layer at 1 / 2 / 4 / 16 rows, blocks of 4 214 / 235 /
224 / 739, of 16 about 600 at every count; weighted by how often a step has each count (`calibrate`'s
DECODE_WEIGHTS) 2 is cheapest, and cheaper than running each row alone (88 / 202 / 375 / 1,307 us), which
did not keep a row's bits there either."""


def attention_by_row_blocks(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                            mask: torch.Tensor | None = None) -> torch.Tensor:
    """`attention_by_products` on blocks of exactly ROW_BLOCK query rows, the last padded with zero rows that
    attend everywhere: the matrix library sees one shape whatever the step's row count, so a row gets the same
    bits alone as among others (no row's values reach another's) even where the library rounds by row count,
    and the keys are read once a block instead of once a row."""
    rows = q.shape[2]
    blocks = []
    for start in range(0, rows, ROW_BLOCK):
        part = q[:, :, start : start + ROW_BLOCK]
        n = part.shape[2]
        part_mask = mask if mask is None or mask.shape[-2] == 1 else mask[..., start : start + n, :]
        if n < ROW_BLOCK:
            part = torch.cat([part, part.new_zeros(*part.shape[:2], ROW_BLOCK - n, part.shape[3])], 2)
            if part_mask is not None and part_mask.shape[-2] != 1:
                pad = part_mask.new_zeros(*part_mask.shape[:-2], ROW_BLOCK - n, part_mask.shape[-1])
                part_mask = torch.cat([part_mask, pad if part_mask.dtype != torch.bool else ~pad], -2)
        blocks.append(attention_by_products(part, k, v, part_mask)[:, :, :n])
    return blocks[0] if len(blocks) == 1 else torch.cat(blocks, 2)


def attention_by_products(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                          mask: torch.Tensor | None = None) -> torch.Tensor:
    """softmax(q k^T / sqrt(d) + mask) v, the query heads of each key head stacked as the rows of one
    product (grouped-query), `mask` additive or boolean (True: attend). The products run in k's dtype, the
    mask and softmax in float32 at least."""
    b, h, rows, d = q.shape
    groups = h // k.shape[1]
    stacked = (q * d**-0.5).reshape(b, k.shape[1], groups * rows, d)
    scores = torch.matmul(stacked, k.transpose(-1, -2)).view(b, h, rows, -1).float()
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
    weights = scores.softmax(-1).to(v.dtype).view(b, k.shape[1], groups * rows, -1)
    return torch.matmul(weights, v).view(b, h, rows, d)


@functools.cache
def _products_keep_rows(dtype: torch.dtype) -> bool:
    """Whether `attention_by_products` over keys of `dtype` gives each of 1-16 query rows what it gives the
    row alone here."""
    generator = torch.Generator().manual_seed(0)
    k, v = torch.randn(2, 1, 2, 200, 64, generator=generator).to(dtype)
    q = torch.randn(1, 6, 16, 64, generator=generator).to(dtype)
    mask = torch.zeros(1, 1, 16, 200).masked_fill(torch.rand(1, 1, 16, 200, generator=generator) < 0.1, float("-inf"))
    with torch.inference_mode():
        alone = torch.cat([attention_by_products(q[:, :, i : i + 1], k, v, mask[:, :, i : i + 1])
                           for i in range(16)], 2)
        return all(torch.equal(attention_by_products(q[:, :, :rows], k, v, mask[:, :, :rows]),
                               alone[:, :, :rows]) for rows in range(2, 17))


def fused_kernels_only(device: torch.device) -> contextlib.AbstractContextManager[object]:
    """On CUDA, allow only the flash and memory-efficient SDPA kernels, so a silent fallback to the
    O(T^2)-memory math kernel becomes an error instead; elsewhere, no restriction."""
    if device.type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION])



class SwiGLU(nn.Module):
    """down(silu(gate(x)) * up(x)); families rename the three projections."""

    def __init__(self, hidden: int, inner: int, bias: bool = False) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inner, bias=bias)
        self.up_proj = nn.Linear(hidden, inner, bias=bias)
        self.down_proj = nn.Linear(inner, hidden, bias=bias)
        self.gate_up: Projector = Projections(GATE_UP, (self.gate_proj, self.up_proj))
        self.down: Projector = Projections(DOWN, (self.down_proj,))

    def forward(self, x: torch.Tensor, adapt: Adapt | None = None, layer: int = 0) -> torch.Tensor:
        gate, up = self.gate_up(x, adapt, layer)
        return self.down(F.silu(gate) * up, adapt, layer)[0]


def fuse_projections(block: Block) -> None:
    """Fuse each group of projections of one input for inference (`FusedProjections`); the block computes
    the same values."""
    attn = block.self_attn
    attn.qkv = FusedProjections(QKV, (attn.q_proj, attn.k_proj, attn.v_proj))
    attn.out = FusedProjections(OUT, (attn.o_proj,))
    assert isinstance(block.mlp, SwiGLU), "a mixture of experts fuses apart (engine.models.llada2)"
    fuse_mlp(block.mlp)


def fuse_mlp(mlp: SwiGLU) -> None:
    mlp.gate_up = FusedProjections(GATE_UP, (mlp.gate_proj, mlp.up_proj))
    mlp.down = FusedProjections(DOWN, (mlp.down_proj,))


def fused_groups(block: Block) -> list[FusedProjections]:
    """The fused projections of a block (after `fuse_projections`), in the order a forward runs them (a
    mixture of experts in place of the MLP has none: `engine.models.moe`)."""
    attn, mlp = block.self_attn, block.mlp
    groups = [attn.qkv, attn.out, getattr(mlp, "gate_up", None), getattr(mlp, "down", None)]
    return [g for g in groups if isinstance(g, FusedProjections)]


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int, kv_heads: int, inner: int, eps: float, qkv_bias: bool,
                 head_dim: int | None = None, qk_norm: bool = False) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(hidden, eps)
        self.self_attn = Attention(hidden, heads, kv_heads, qkv_bias, head_dim=head_dim)
        if qk_norm:
            self.self_attn.q_norm = RMSNorm(self.self_attn.head_dim, eps)
            self.self_attn.k_norm = RMSNorm(self.self_attn.head_dim, eps)
        self.post_attention_layernorm = RMSNorm(hidden, eps)
        self.mlp: nn.Module = SwiGLU(hidden, inner)  # or a mixture of experts (engine.models.moe)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], key_mask: torch.Tensor | None,
                ctx: ForwardContext | None, layer: int) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), rope, key_mask, ctx, layer)
        adapt = ctx.adapt if ctx is not None else None
        y: torch.Tensor = self.mlp(self.post_attention_layernorm(x), adapt, layer)
        return x + y
