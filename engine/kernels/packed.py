"""bfloat16 weights packed once into oneDNN's blocked layout, in column pieces that keep a row's bits.

F.linear on a plain bfloat16 matrix reorders it on every call: on a 2-core Xeon with AMX the products of
one SmolLM2 decoding step took 20 ms, about float32's time, where the packed matrix takes 13-15 ms for 1
to 16 rows (the memory bound). On the Zen 4 EPYC (AVX-512 with bfloat16 dot products, no AMX) the packed
copy runs 16 rows for 1.3-1.5x one row's time where float16 runs them for 6-14x.

A decoding step's rows must get the bits they get alone (`engine.loading.calibrate.row_invariant`). oneDNN
keeps them for up to 1,024 input columns on both CPUs; on the Zen 4 EPYC a product over more (SmolLM2's
MLP down-projection, 1,536) sums them in an order that changes with the row count, and a row's output
differs in its last bit at 2-16 rows in about half of random trials (none at 512-1,024 columns). So a
wider weight is packed in equal pieces of at most MAX_PIECE_COLUMNS columns whose float32 outputs are
added: one more small product per call, the same bits for a row whatever rows run beside it."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

MAX_PIECE_COLUMNS = 1024


@functools.cache
def packs_bfloat16() -> bool:
    """Whether oneDNN runs bfloat16 products on this CPU (bfloat16 instructions or AMX tiles)."""
    return bool(torch.backends.mkldnn.is_available()  # type: ignore[no-untyped-call]
                and torch.ops.mkldnn._is_mkldnn_bf16_supported())


@dataclass(frozen=True)
class PackedWeight:
    """A bfloat16 weight (N, K) as oneDNN-packed pieces of its columns, in order."""

    pieces: tuple[torch.Tensor, ...]
    columns: tuple[int, ...]  # each piece's column count
    rows: int  # N

    @classmethod
    def pack(cls, weight: torch.Tensor) -> PackedWeight:
        count = -(-weight.shape[1] // MAX_PIECE_COLUMNS)
        parts = torch.tensor_split(weight, count, dim=1)
        pieces = tuple(torch.ops.mkldnn._reorder_linear_weight(p.contiguous(), 1) for p in parts)
        return cls(pieces, tuple(p.shape[1] for p in parts), weight.shape[0])

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., K) times the weight, in float32 (the product itself runs in bfloat16)."""
        xl = x.to(torch.bfloat16)
        if len(self.pieces) == 1:
            return self._piece(xl, self.pieces[0]).float()
        y: torch.Tensor | None = None
        for piece, part in zip(self.pieces, torch.split(xl, list(self.columns), -1)):
            out = self._piece(part.contiguous(), piece).float()
            y = out if y is None else y.add_(out)
        assert y is not None
        return y

    @staticmethod
    def _piece(x: torch.Tensor, piece: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = torch.ops.mkldnn._linear_pointwise(x, piece, None, "none", [], "")
        return y

    def plain(self) -> torch.Tensor:
        """The weight in the plain layout, to save."""
        return torch.cat([p.to_dense() for p in self.pieces], 1)


LowWeight = torch.Tensor | PackedWeight
"""A reduced-precision copy of a product's weight: plain, or packed where oneDNN runs bfloat16."""


def pack(weight: torch.Tensor) -> LowWeight:
    """`weight` packed, where it is a bfloat16 CPU weight and oneDNN runs bfloat16; else as it is."""
    if weight.dtype != torch.bfloat16 or weight.device.type != "cpu" or weight.is_meta or not packs_bfloat16():
        return weight
    return PackedWeight.pack(weight)


def plain(weight: LowWeight) -> torch.Tensor:
    """`weight` in the plain layout (`pack` undone), to save."""
    return weight.plain() if isinstance(weight, PackedWeight) else weight
