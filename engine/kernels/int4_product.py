"""Products with a GGUF file's own 4-bit blocks on torch's int4 CPU kernel, rows in bfloat16.

A one-row decoding step on a CPU is bound by reading the weights: SmolLM2's 4-bit blocks are a quarter of
its bfloat16 copy. torch's `_weight_int4pack_mm_for_cpu` multiplies bfloat16 rows by 4-bit codes in groups
of 32 with a bfloat16 scale and offset per group (w = (q - 8) * scale + offset). Q4_0 (w = d (q - 8)) and
Q4_1 (w = d q + m) blocks are groups of 32 of that form, so the codes are the file's own and only the scales
and offsets are rounded to bfloat16: offset = m + 8 d for Q4_1, 0 for Q4_0. On a 2-core Xeon with AVX-512
the 30 blocks' products of one row took 4 ms against 14 ms for the packed bfloat16 copy (16 rows: 25 against
15 ms); without AVX-512 the kernel is far slower than float32, and the calibration does not pick it.

The kernel needs every product's output width a multiple of 16 and its input width of 32. On a CPU with AMX
tiles the same codes run on `engine.kernels.tile_int4` instead, whose cost hardly grows with the rows.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

import torch
import torch.nn.functional as F

from engine.kernels.block_products import BLOCK, Blocks, fields
from engine.kernels.int8_blocks import Int8BlockProduct
from engine.kernels.tile_int4 import TileInt4Product, pack

KINDS = ("Q4_0", "Q4_1")


def supported() -> bool:
    """Whether this torch has the CPU int4 kernel."""
    return hasattr(torch, "_weight_int4pack_mm_for_cpu") and hasattr(torch, "_convert_weight_to_int4pack_for_cpu")


def enabled() -> bool:
    """Whether torch's kernel is worth offering to the calibration (`engine.loading.native_build.int4_offered`
    also offers dcomplete's own builds), which races it against its other choices inside whole decoding
    forwards: where torch runs AVX-512 kernels (on an AVX2 machine it ran 4-30x slower than
    float32), unless `DCOMPLETE_INT4=off`. Steps of several rows cost more on it than on the packed bfloat16
    copy, so the sampler drafts less, but it writes more tokens a second and shortens the long pauses: on
    the Zen 4 EPYC 36-42 against 31-35 tokens/s (`bench.speed`) and paused completions' p95 833-855 against
    1,090-1,134 ms (`bench.lsp_latency`), the same pass@1 (docs/experiments.md)."""
    return (supported() and torch.backends.cpu.get_cpu_capability().startswith("AVX512")
            and os.environ.get("DCOMPLETE_INT4", "") != "off")


@dataclass(frozen=True)
class Int4Product:
    """x (..., K) times a weight (N, K) held as torch's packed int4 `codes` (N, K / 2) and `scales`
    (K / 32, N, 2) bfloat16 (scale, offset per group), in float32: the product itself runs in bfloat16."""

    codes: torch.Tensor
    scales: torch.Tensor
    backend: ClassVar[str] = "torch"
    down_dtypes: ClassVar[tuple[torch.dtype, ...]] = (torch.float32,)  # what `down` may be (`low_rank_input`)

    @property
    def n(self) -> int:
        return self.scales.shape[1]

    def tensors(self) -> dict[str, torch.Tensor]:
        return {"codes": self.codes, "scales": self.scales}

    @property
    def k(self) -> int:
        return self.scales.shape[0] * BLOCK

    def __call__(self, x: torch.Tensor, down: torch.Tensor | None = None) -> torch.Tensor:
        """x (..., K or fewer columns: the missing ones are zero), followed by its products by `down` (a
        LoRA's down-projection, `low_rank_input`) when given, times the weight, in float32."""
        if down is not None:
            x = low_rank_input(x, down, self.k)
        if x.shape[-1] < self.k:
            x = F.pad(x, (0, self.k - x.shape[-1]))
        rows = x.reshape(-1, x.shape[-1]).to(torch.bfloat16)
        y = torch._weight_int4pack_mm_for_cpu(rows, self.codes, BLOCK, self.scales)
        return y.float().view(*x.shape[:-1], self.n)


def low_rank_input(x: torch.Tensor, down: torch.Tensor, k: int) -> torch.Tensor:
    """x's rows followed by the LoRA's down-projection of each, then zeros up to `k` columns (a 4-bit
    product's input width: its columns come in groups of 32), the input of a product whose weight holds the
    up-projection. One row at a time, by a float32 matrix-vector product (3.5 us where oneDNN's bfloat16
    products of these shapes take 20): products of several rows (even batched ones) give a row other bits
    than it gets alone, and a decoding step's rows must get the same logits whether a step runs them alone
    or beside drafts. The product reads the down-projection's own rows only."""
    rows = x.reshape(-1, x.shape[-1])
    width, rank = rows.shape[1], down.shape[0]
    wide = rows.new_zeros((rows.shape[0], k))
    wide[:, :width] = rows
    for i in range(rows.shape[0]):
        torch.mv(down, rows[i], out=wide[i, width : width + rank])
    return wide.view(*x.shape[:-1], k)


OwnBlocks: TypeAlias = Int4Product | TileInt4Product | Int8BlockProduct
"""What the `int4` kernel of a product runs: the checkpoint's own blocks on a native kernel (4-bit; the 8-bit
head on the AVX2 build, `engine.kernels.int8_blocks`)."""


def restored(tensors: dict[str, torch.Tensor], tiles: ctypes.CDLL | None) -> OwnBlocks | None:
    """The product `tensors()` gave (without the "int4." prefix), on `tiles` (dcomplete's built int4
    kernel) for its own layouts; None when the tensors are of a kind this process cannot run."""
    if "tiles" in tensors:
        return None if tiles is None else TileInt4Product(tensors["tiles"], tiles)
    if "tiles8" in tensors:
        return None if tiles is None or not hasattr(tiles, "dc_int8_mm") else Int8BlockProduct(tensors["tiles8"], tiles)
    if "codes" in tensors:
        return Int4Product(tensors["codes"], tensors["scales"])
    return None


def fits(parts: Sequence[Blocks]) -> bool:
    """Whether stacked `parts` can run on the kernel: 4-bit blocks of one kind, widths it takes."""
    kinds = {p.kind for p in parts}
    n = sum(p.data.shape[0] for p in parts)
    return len(kinds) == 1 and kinds <= set(KINDS) and n % 16 == 0


def from_blocks(parts: Sequence[Blocks], extra: torch.Tensor | None = None,
                tiles: ctypes.CDLL | None = None) -> OwnBlocks:
    """The product by the stacked `parts` (Q4_0 or Q4_1 blocks of one kind, as `fits`), followed by the
    input columns `extra` (N, E) when given, quantized here to 4 bits in groups of 32 (`quantize_columns`);
    on `tiles` (dcomplete's built int4 kernel, `engine.loading.native_build.int4_library`) when given."""
    scale_parts, offset_parts, code_parts = [], [], []
    for part in parts:
        scale, low, codes = fields(part)  # (N, kb), (N, kb) or None, (N, kb, 32)
        scale_parts.append(scale)
        offset_parts.append(torch.zeros_like(scale) if low is None else low + 8 * scale)
        code_parts.append(codes.reshape(codes.shape[0], -1))
    scale, offset = torch.cat(scale_parts), torch.cat(offset_parts)
    codes = torch.cat(code_parts).to(torch.int32)
    if extra is not None:
        more_codes, more_scale, more_offset = quantize_columns(extra)
        codes = torch.cat([codes, more_codes], 1)
        scale, offset = torch.cat([scale, more_scale], 1), torch.cat([offset, more_offset], 1)
    if tiles is not None:
        return TileInt4Product(pack(codes, scale, offset), tiles)
    packed = torch._convert_weight_to_int4pack_for_cpu(codes, 1)
    return Int4Product(packed, torch.stack([scale.T, offset.T], -1).to(torch.bfloat16).contiguous())


def quantize_columns(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(codes (N, E') int32, scales (N, E' / 32), offsets) of `weight` (N, E), its columns padded with zeros
    to E' (a multiple of 32): per group of 32, 16 levels from its minimum to its maximum, the codes taken
    against the scale and offset as bfloat16 holds them."""
    n = weight.shape[0]
    groups = F.pad(weight.float(), (0, (-weight.shape[1]) % BLOCK)).view(n, -1, BLOCK)
    low, high = groups.amin(-1), groups.amax(-1)
    scale = ((high - low) / 15).clamp(min=1e-8).to(torch.bfloat16).float()
    offset = (low + 8 * scale).to(torch.bfloat16).float()
    codes = ((groups - offset[..., None]) / scale[..., None] + 8).round().clamp(0, 15)
    return codes.reshape(n, -1).to(torch.int32), scale, offset
