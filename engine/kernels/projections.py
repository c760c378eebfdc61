"""The linear projections of a block, as the block calls them: one input, one or more outputs.

`Projections` runs the block's `nn.Linear`s one by one under their checkpoint names and lets a family's
adapter (`layers.Adapt`) change each output: the form training and the reference paths use.

`FusedProjections` is the inference form: the projections of one input run as one matrix product, which
is most of a small model's cost per layer. Two things make a CPU decoding step cheaper:
- the kernel this machine runs fastest at the call's row count (`KERNELS`, chosen per weight shape and
  row count by `engine.loading.calibrate`): float32 for many rows (prefill), a float16 or bfloat16 copy for
  decoding, where reading half the bytes makes the product up to twice as fast (and a CPU with bfloat16
  matrix units runs 16 rows for the price of one, on a copy packed once into oneDNN's layout: `engine.kernels.packed`);
- a low-rank adapter (LoRA) folded in: its down-projections (A) are extra output rows of the same product,
  and one small product by the block-diagonal up-projections (B) adds the update to the rows it applies to,
  instead of two products per projection. With a reduced-precision kernel (`LOW`), a call whose rows all
  take the LoRA (a decoding step: every row is in a gap) multiplies by a second copy with the update added
  into the weight, so the adapter costs nothing there; fixed text and mixed calls keep the folded form.
  On the checkpoint's own 4-bit blocks (`int4`, `engine.kernels.int4_product`) the update cannot be added into
  the weight (it is a fifth of a 4-bit step): the up-projection rides along as extra input columns of the
  4-bit weight, which a decoding step fills with the row's down-projection.
Once built (`engine.loading.compiled`, off the engine's thread), a decoding call of 1..MAX_TABLE_ROWS rows
runs `compiled` instead: inductor's int8 product (`engine.kernels.compiled_int8`) by the weight a decoding
step multiplies by (with the LoRA added in, when there is one).
Calls that hold fixed-text rows (a prefill, the text recomputed after an edit) take the `mixed` table, so
a text row gets the bits the prefill gave it whatever kernel decoding runs.
The `nn.Linear` parameters become views into the fused float32 matrix, so nothing is stored twice in float32
and checkpoints still load and save by name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from engine.kernels.block_products import BlockProduct
from engine.kernels.int4_product import OwnBlocks
from engine.kernels.packed import LowWeight, PackedWeight, pack, plain


class Adapt(Protocol):
    """What a product needs of a family's adapter (`engine.models.layers.Adapt` adds each layer's attention):
    a change to each projection's output (`project`), or a low-rank update folded into fused projections
    applied to the flattened `rows`; `every_row`: every query row is a gap row (a decoding step; `rows` then
    lists them all, or none with the adapter off)."""

    rows: torch.Tensor
    every_row: bool

    def project(self, layer: int, name: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor: ...


class Projections:
    def __init__(self, names: Sequence[str], linears: Sequence[nn.Module]) -> None:
        self.names = tuple(names)
        self.linears = tuple(linears)

    def __call__(self, x: torch.Tensor, adapt: Adapt | None, layer: int) -> tuple[torch.Tensor, ...]:
        ys = [linear(x) for linear in self.linears]
        if adapt is None:
            return tuple(ys)
        return tuple(adapt.project(layer, name, x, y) for name, y in zip(self.names, ys))


Kernel = str
LINEAR, COLUMNS, HALF, BF16, BLOCKS, INT4 = "linear", "columns", "half", "bfloat16", "blocks", "int4"
KERNELS: tuple[Kernel, ...] = (LINEAR, COLUMNS, HALF, BF16, BLOCKS, INT4)
"""How a product runs: `linear` rows first in the model's dtype (F.linear; best for many rows), `columns`
weight times the rows' transpose (a CPU runs it at the weight's memory bound for a few rows where the
rows-first product falls onto a slower kernel), `half` rows first on a float16 copy of the weight (half
the bytes to read: faster for one row on a memory-bound CPU, slower than float32 from a few rows on),
`bfloat16` the same on a bfloat16 copy (slow without bfloat16 instructions; with AMX tiles 1-16 rows cost
about the same, with the Zen 4 EPYC's bfloat16 dot products 16 rows about 2x one row), `blocks` on the checkpoint's own 4- or 8-bit blocks (`engine.kernels.block_products`, when it came
in them) through ONNX Runtime, `int4` on its own 4-bit blocks through torch's int4 kernel with bfloat16 rows
(`engine.kernels.int4_product`: with AVX-512, a third of the packed bfloat16 copy's time at one row)."""
LOW: dict[Kernel, torch.dtype] = {HALF: torch.float16, BF16: torch.bfloat16}  # kernels on a reduced copy
MAX_TABLE_ROWS = 16  # calls with more rows (prefill) run the product's `wide` kernel...
MAX_WIDE_ROWS = 256  # ...up to this many rows, the most it is timed at; beyond, `linear` (a 1,024-token
# prefill ran 1.2-1.5x slower on the columns-first product that won at 48 and 256 rows), unless `wide` is a
# reduced-precision copy: matrix units only gain with more rows


def default_kernels(device: torch.device) -> tuple[Kernel, ...]:
    """The kernel per row count (1..MAX_TABLE_ROWS) before any measurement: `columns` for 2-16 rows on a
    CPU (measured faster for every SmolLM2 shape), `linear` elsewhere."""
    if device.type != "cpu":
        return (LINEAR,) * MAX_TABLE_ROWS
    return (LINEAR,) + (COLUMNS,) * (MAX_TABLE_ROWS - 1)


class FusedProjections:
    def __init__(self, names: Sequence[str], linears: Sequence[nn.Linear]) -> None:
        self.names = tuple(names)
        self._linears = tuple(linears)
        self.sizes = [linear.out_features for linear in linears]
        self.width = sum(self.sizes)
        has_bias = [linear.bias is not None for linear in linears]
        assert all(has_bias) or not any(has_bias), "fused projections must all have a bias or none"
        self.bias = _joined([linear.bias.detach() for linear in linears if linear.bias is not None]) if all(has_bias) else None
        self._full = _joined([linear.weight.detach() for linear in linears])  # + LoRA down rows when attached
        self.weight = self._full
        self.kernels = default_kernels(self.weight.device)
        self.wide: Kernel = LINEAR  # the kernel for calls of more than MAX_TABLE_ROWS rows
        self.steady_rows = 0  # a reduced-precision call runs in pieces of at most this many rows (0: whole)
        self.mixed: tuple[Kernel, ...] = ()  # per row count, for calls where some rows take the LoRA and some not
        self.low: dict[Kernel, LowWeight] = {}  # `_full` in a `LOW` kernel's dtype, per kernel in use
        self.merged: dict[Kernel, LowWeight] = {}  # the same with the LoRA added in, when there is one
        self.blocks: BlockProduct | None = None  # the checkpoint's own blocks of `weight`, when it has them
        self.int4: OwnBlocks | None = None  # its own blocks for the int4 kernel (torch's, or dcomplete's)
        # (`_full`, `int4`, then `_int4_down()` of them: contiguous, and in float16 where exact and int4 reads it)
        self._down: tuple[torch.Tensor, OwnBlocks | None, torch.Tensor] | None = None
        self.up: torch.Tensor | None = None  # block-diagonal up-projections (width, rank total)
        self.scale = 1.0
        self.compiled: Callable[[torch.Tensor], torch.Tensor] | None = None  # x (1, rows, K) -> (1, rows, width)
        if len(linears) > 1:
            self._rebind()

    def _rebind(self) -> None:
        """Make the `nn.Linear` parameters views into the fused matrix (one copy in memory)."""
        biases: Sequence[torch.Tensor | None] = (torch.split(self.bias, self.sizes) if self.bias is not None
                                                  else [None] * len(self._linears))
        for linear, w, b in zip(self._linears, torch.split(self.weight, self.sizes), biases):
            linear.weight = nn.Parameter(w, requires_grad=False)
            if b is not None:
                linear.bias = nn.Parameter(b, requires_grad=False)

    @property
    def shape_key(self) -> str:
        """What a kernel measurement of this product depends on: the weight's shape with the folded rank."""
        return f"{self._full.shape[0]}x{self._full.shape[1]}"

    def attach_low_rank(self, downs: Sequence[torch.Tensor], ups: Sequence[torch.Tensor], scale: float) -> None:
        """Fold a LoRA in: `downs[i]` (r, d_in) and `ups[i]` (out_i, r) for the i-th projection."""
        rank = sum(d.shape[0] for d in downs)
        self._full = _joined([self.weight, *[d.to(self.weight.dtype) for d in downs]])
        self.weight = self._full[: self.width]
        self._rebind()
        up = self.weight.new_zeros((self.width, rank))
        row = col = 0
        for size, u in zip(self.sizes, ups):
            if not up.is_meta:
                up[row : row + size, col : col + u.shape[1]] = u
            row, col = row + size, col + u.shape[1]
        self.up, self.scale = up, scale
        self.set_kernels(self.kernels)

    def prepared(self) -> dict[str, torch.Tensor]:
        """The tensors this product runs on (`engine.loading.prepared` keeps them on disk)."""
        named = {"full": self._full, "bias": self.bias, "up": self.up,
                 **({f"int4.{k}": t for k, t in self.int4.tensors().items()} if self.int4 else {}),
                 **{f"low.{k}": plain(t) for k, t in self.low.items()},
                 **{f"merged.{k}": plain(t) for k, t in self.merged.items()}}
        return {k: v for k, v in named.items() if v is not None}

    def storage(self) -> int:
        """The address of the fused matrix's storage, which the `nn.Linear` weights view."""
        return self._full.untyped_storage().data_ptr()

    def restore(self, tensors: dict[str, torch.Tensor]) -> None:
        """Take `prepared()`'s tensors of an identical product (built on the meta device, fused, kernels
        set): the reduced-precision copies are used as they are, not made again."""
        if (tensors["full"].shape != self._full.shape or set(self.prepared()) != set(tensors)):
            raise ValueError(f"a prepared product of shape {self.shape_key} does not fit")
        self._full = tensors["full"]
        self.weight = self._full[: self.width]
        self.bias = tensors.get("bias")
        self.up = tensors.get("up")
        self.low = {k: pack(tensors[f"low.{k}"]) for k in self.low}
        self.merged = {k: pack(tensors[f"merged.{k}"]) for k in self.merged}
        self._rebind()

    @property
    def available(self) -> tuple[Kernel, ...]:
        """The kernels this product can run."""
        return ((LINEAR, COLUMNS, HALF, BF16) + ((BLOCKS,) if self.blocks is not None else ())
                + ((INT4,) if self.int4 is not None else ()))

    def set_kernels(self, kernels: Sequence[Kernel]) -> None:
        """The kernel for calls of 1..len(kernels) rows (more rows: `wide`; calls with text rows: `mixed`):
        makes the reduced-precision copies those three name, and the copies with the LoRA added for the
        ones `kernels` names (decoding steps)."""
        self.kernels = tuple(k if k in self.available else LINEAR for k in kernels)
        used = {*self.kernels, *self.mixed, self.wide}
        self.low = {k: pack(_to_low(self._full, dtype)) for k, dtype in LOW.items() if k in used}
        self.merged = {}
        if self.up is not None:
            for kernel, dtype in LOW.items():
                if kernel not in self.kernels:
                    continue
                if self._full.is_meta:
                    self.merged[kernel] = _to_low(self.weight, dtype)
                else:
                    merged = torch.addmm(self.weight, self.up, self._full[self.width :], alpha=self.scale)
                    self.merged[kernel] = pack(merged.to(dtype))

    def _int4_down(self) -> torch.Tensor:
        """The LoRA's down-projection (contiguous), whose products by a row an `int4` product whose weight
        holds the up-projection takes as extra input columns (`engine.loading.quantize.attach_int4`): in
        float16 where that holds its values exactly (an adapter saved in float16), half the bytes a step
        reads for the same bits."""
        if self._down is None or self._down[0] is not self._full or self._down[1] is not self.int4:
            down = self._full[self.width :].contiguous()
            if self.int4 is not None and torch.float16 in self.int4.down_dtypes:
                half = down.half()
                down = half if torch.equal(half.float(), down) else down
            self._down = (self._full, self.int4, down)
        return self._down[2]

    def _kernel(self, x: torch.Tensor, mixed: bool = False, decoding: bool = False) -> Kernel:
        """The kernel for x's rows: a decoding step (`decoding`: every row a gap row) keeps the table's
        kernel past its rows too (a step of many gaps), so its rows keep the bits they get alone."""
        rows = x.numel() // x.shape[-1]
        table = self.mixed if mixed and self.mixed else self.kernels
        if rows <= len(table) or (decoding and not mixed):
            return table[min(rows, len(table)) - 1]
        return self.wide if rows <= MAX_WIDE_ROWS or self.wide in LOW else LINEAR

    def product(self, x: torch.Tensor, width: int, mixed: bool = False, decoding: bool = False) -> torch.Tensor:
        """x times the first `width` rows of the fused weight, plus the bias, by the kernel for x's rows
        (`mixed`: from the table for calls that mix text rows with gap rows)."""
        rows = x.numel() // x.shape[-1]
        if self.compiled is not None and self.up is None and not mixed and rows <= MAX_TABLE_ROWS and width == self.width:
            return self._compiled(x)
        kernel = self._kernel(x, mixed, decoding)
        bias = None if self.bias is None else F.pad(self.bias, (0, width - self.width))
        quantized = self.blocks if kernel == BLOCKS else self.int4 if kernel == INT4 else None
        if quantized is not None:
            y = quantized(x)
            if width > self.width:  # the adapter's down-projections stay in float32
                y = torch.cat([y, F.linear(x, self._full[self.width : width])], -1)
        elif kernel in self.low:
            y = _low_product(x, self.low[kernel], width, self.steady_rows)
        elif kernel == COLUMNS:
            y = (self._full[:width] @ x.reshape(rows, x.shape[-1]).t()).t().contiguous().view(*x.shape[:-1], width)
        else:
            return F.linear(x, self._full[:width], bias)
        return y if bias is None else y + bias

    def _compiled(self, x: torch.Tensor) -> torch.Tensor:
        """x's product by the `compiled` kernel (the decoding weight), plus the bias."""
        assert self.compiled is not None
        rows = x.numel() // x.shape[-1]
        y = self.compiled(x.reshape(1, rows, x.shape[-1]).contiguous()).view(*x.shape[:-1], self.width)
        return y if self.bias is None else y + self.bias

    def __call__(self, x: torch.Tensor, adapt: Adapt | None, layer: int) -> tuple[torch.Tensor, ...]:
        low_rank = self.up is not None and adapt is not None and adapt.rows.numel() > 0
        if not low_rank:
            text = adapt is not None and not adapt.every_row
            decoding = adapt is not None and adapt.every_row
            return self.product(x, self.width, mixed=text, decoding=decoding).split_with_sizes(self.sizes, -1)
        assert adapt is not None and self.up is not None
        if adapt.every_row:
            gaps = self._gap_rows(x)
            if gaps is not None:
                return gaps.split_with_sizes(self.sizes, -1)
        else:
            # A call that mixes text rows with gap rows (the first step of a request, or after an edit): the
            # text rows take the `mixed` table, the gap rows a decoding step's own product, so a gap row's
            # keys and values have the bits one-token-per-step decoding gives them.
            flat = x.reshape(-1, x.shape[-1])
            gaps = self._gap_rows(flat.index_select(0, adapt.rows))
            if gaps is not None:
                y = self.product(x, self.width, mixed=True)
                y.view(-1, self.width).index_copy_(0, adapt.rows, gaps)
                return y.split_with_sizes(self.sizes, -1)
        # A float32 decoding kernel: the LoRA's products beside the base's, folded into one product.
        y = self.product(x, self._full.shape[0], mixed=not adapt.every_row, decoding=adapt.every_row)
        base, mid = y[..., : self.width], y[..., self.width :]
        if adapt.every_row:
            base = base + F.linear(mid, self.up) * self.scale
        else:
            # In place on the product's own output, touching only the adapted rows: an out-of-place
            # index_add over every row of a prefill costs more than the product itself.
            flat = y.reshape(-1, y.shape[-1])
            picked = flat.index_select(0, adapt.rows)
            delta = F.linear(picked[:, self.width :], self.up) * self.scale
            flat[adapt.rows, : self.width] = picked[:, : self.width] + delta
            base = flat[:, : self.width].reshape(*y.shape[:-1], self.width)
        return base.split_with_sizes(self.sizes, -1)  # torch.split's Python layer: 2 us a call

    def _gap_rows(self, x: torch.Tensor) -> torch.Tensor | None:
        """x's rows, every one a gap row, by a decoding step's product with the LoRA added in, plus the bias;
        None where the decoding kernel has no such product (a float32 kernel: the LoRA's products run
        beside the base's, folded into one)."""
        if self.compiled is not None and x.numel() // x.shape[-1] <= MAX_TABLE_ROWS:
            return self._compiled(x)
        kernel = self._kernel(x, decoding=True)
        merged = self.merged.get(kernel)
        if kernel == INT4 and self.int4 is not None:
            y = self.int4(x, self._int4_down())
        elif merged is not None:
            # One product by the weight with the LoRA added in costs what the base's product costs, where
            # the low-rank products cost a fifth of a step.
            y = _low_product(x, merged, self.width, self.steady_rows)
        else:
            return None
        return y if self.bias is None else y + self.bias


def _joined(tensors: list[torch.Tensor]) -> torch.Tensor:
    """`tensors` stacked along the first dimension; a single one as it is (no copy). On the meta device only
    the shape is made: a model built there is fused for `engine.loading.prepared` to fill in, and torch's meta
    kernels for cat and matmul import its compiler (2.5 s) on first use."""
    if len(tensors) == 1:
        return tensors[0]
    if tensors[0].is_meta:
        rows = sum(t.shape[0] for t in tensors)
        return torch.empty((rows, *tensors[0].shape[1:]), dtype=tensors[0].dtype, device="meta")
    return torch.cat(tensors)


def _to_low(tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A copy in `dtype` (on the meta device, the shape alone; see `_joined`)."""
    if tensor.is_meta:
        return torch.empty(tensor.shape, dtype=dtype, device="meta")
    return tensor.to(dtype)


def _low_product(x: torch.Tensor, low: LowWeight, width: int, steady_rows: int = 0) -> torch.Tensor:
    """x times the first `width` rows of a reduced-precision copy (`engine.kernels.packed`), in x's dtype,
    in pieces of at most `steady_rows` rows when that is set (`engine.loading.calibrate.steady_rows`)."""
    rows = x.numel() // x.shape[-1]
    if steady_rows and rows > steady_rows:
        flat = x.reshape(rows, x.shape[-1])
        pieces = [_low_product(piece, low, width) for piece in torch.split(flat, steady_rows)]
        return torch.cat(pieces).view(*x.shape[:-1], width)
    if isinstance(low, PackedWeight):  # a packed matrix cannot be sliced: the few LoRA rows beyond `width` cost little
        y = low(x)
        return (y if width == low.rows else y[..., :width]).to(x.dtype)
    return F.linear(x.to(low.dtype), low[:width]).to(x.dtype)
