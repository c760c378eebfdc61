"""A checkpoint's own 8-bit blocks (GGUF Q8_0) on the AVX2 kernel: the vocabulary projection of a CPU without AMX.

SmolLM2's GGUF keeps its (tied) vocabulary projection in 8-bit blocks, which the 4-bit kernels do not take.
On a CPU without bfloat16 instructions its row-invariant copies (float16, bfloat16) go through products that
read the weight once per row: on the Xeon held to AVX2, 2.5 ms at one row, 9.5 at four and 40.5 at sixteen,
a quarter of a 16-row step. `int4_avx2.c`'s `dc_int8_mm` multiplies the rows, rounded to int8 per group of 32
as the 4-bit product rounds them (`engine.kernels.tile_int4.int8_rows`), by the codes as they are stored
(`_mm256_maddubs_epi16` on their magnitudes, their signs moved to the row), every weight read once for all
rows: alone 2.4 / 3.3 / 15.4 ms at 1 / 4 / 16 rows with float32 FMAs on codes widened per call, 0.9 / 1.3 /
4.9 against 2.4 / 3.0 / 7.8 for that form side by side on a faster hour. A row's bits are the same whatever
rows run beside it, and the weights are the values the file holds (int8 times its float16 scale) exactly,
where the bfloat16 copy rounds them.

A product built here is the head's `int4` kernel of `engine.kernels.projections.FusedProjections` (the
checkpoint's own blocks on dcomplete's kernel), chosen or not by the calibration with the 4-bit ones.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from engine.kernels.block_products import BLOCK, Blocks, fields
from engine.kernels.tile_int4 import NativeProduct, backend, int8_rows

KIND = "Q8_0"
GROUP_BYTES = 512 + 16 * 4  # per 16 outputs and 32 columns: the codes, then the outputs' float32 scales


@functools.cache
def offered(lib: ctypes.CDLL) -> bool:
    """Whether `lib` (the built 4-bit kernel, `engine.kernels.tile_int4.bind`) has the 8-bit product and it
    passes `checks` (the AMX library has none: its bfloat16 head is already flat from 1 to 16 rows)."""
    return hasattr(lib, "dc_int8_mm") and checks(lib)


def _signature(lib: ctypes.CDLL) -> Any:
    mm = lib.dc_int8_mm
    mm.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                   ctypes.c_int64, ctypes.c_int64, ctypes.c_int]
    mm.restype = ctypes.c_int
    return mm


def checks(lib: ctypes.CDLL) -> bool:
    """A product of random codes against float64, of three rows and of twenty, each row also alone, rows
    given at a stride: a kernel that computes wrong products or gives a row other bits beside others never
    serves."""
    generator = torch.Generator().manual_seed(0)
    codes = torch.randint(-127, 128, (48, 96), generator=generator).to(torch.int8)
    scale = torch.rand(48, 3, generator=generator).half().float() / 64
    product = Int8BlockProduct(pack(codes, scale), lib)
    weight = codes.double() * scale.double().repeat_interleave(BLOCK, 1)
    for rows in (3, 20):
        x = torch.randn(rows, 100, generator=generator)[:, :96]
        y = product(x)
        alone = torch.cat([product(x[i : i + 1]) for i in range(rows)])
        if not (torch.allclose(y.double(), int8_rows(x) @ weight.T, rtol=1e-5, atol=1e-4) and torch.equal(alone, y)):
            return False
    return True


def fits(parts: Sequence[Blocks]) -> bool:
    """Whether stacked `parts` can run on the kernel: 8-bit blocks, a multiple of 16 outputs."""
    return {p.kind for p in parts} == {KIND} and sum(p.data.shape[0] for p in parts) % 16 == 0


def pack(codes: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The kernel's layout of a weight (N, K) given as int8 codes (N, K) with a scale per group of 32
    (N, K / 32; w = q * scale): per 16 outputs and group, the 512 codes in chunks of four columns (a chunk's
    16 outputs in turn, each its four codes), then the 16 scales."""
    n, k = codes.shape
    groups = k // BLOCK
    columns = codes.view(n // 16, 16, groups, 8, 4).permute(0, 2, 3, 1, 4).reshape(n // 16, groups, 16 * BLOCK)
    scales = scale.float().view(n // 16, 16, groups).permute(0, 2, 1).contiguous()
    return torch.cat([columns.view(torch.uint8), scales.view(torch.uint8)], -1).contiguous()


def from_blocks(parts: Sequence[Blocks], lib: ctypes.CDLL) -> Int8BlockProduct:
    """The product by the stacked `parts` (Q8_0 blocks, as `fits`) on `lib` (where `offered`)."""
    scales, codes = [], []
    for part in parts:
        scale, _, offset_codes = fields(part)  # codes + 128, as uint8
        scales.append(scale)
        codes.append((offset_codes.reshape(offset_codes.shape[0], -1).to(torch.int16) - 128).to(torch.int8))
    return Int8BlockProduct(pack(torch.cat(codes), torch.cat(scales)), lib)


@dataclass(frozen=True)
class Int8BlockProduct(NativeProduct):
    """x (..., K) times a weight (N, K) in `pack`'s layout (N / 16, K / 32, GROUP_BYTES), in float32."""

    down_dtypes: ClassVar[tuple[torch.dtype, ...]] = ()  # no LoRA columns: the head has no adapter

    def _entry(self) -> Any:
        return _signature(self.lib)

    @property
    def backend(self) -> str:
        """The built kernel it runs on (calibrations are kept per kernel)."""
        return backend(self.lib)

    def tensors(self) -> dict[str, torch.Tensor]:
        return {"tiles8": self.weights}

    def __call__(self, x: torch.Tensor, down: torch.Tensor | None = None) -> torch.Tensor:
        if down is not None:
            raise ValueError("the 8-bit product takes no down-projection")
        if x.shape[-1] != self.k:
            raise ValueError(f"{x.shape[-1]} input columns for a product of {self.k}")
        rows = x.reshape(-1, self.k)
        if rows.dtype != torch.float32 or rows.stride(-1) != 1:
            rows = rows.float().contiguous()
        y = torch.empty(rows.shape[0], self.n)
        if rows.shape[0] and self._mm(rows.data_ptr(), rows.shape[0], rows.stride(0), self._address, y.data_ptr(),
                                      self.n, self.k, torch.get_num_threads()) != 0:
            raise MemoryError("the 8-bit kernel could not allocate its input rows")
        return y.view(*x.shape[:-1], self.n)
