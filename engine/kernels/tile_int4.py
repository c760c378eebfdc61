"""The `int4` kernel on AMX tiles: 4-bit products whose cost hardly grows from 1 to 16 rows.

torch's int4 CPU kernel (`engine.kernels.int4_product`) reads a quarter of the bfloat16 copy's bytes but is
bound by arithmetic past one row: on the 2-core AMX Xeon a product of SmolLM2's gate and up projections
(3,104 x 576) takes 55 us at one row and 390 at 16, so a drafting step of 16 rows costs 2.6x a one-row step.
`tile_int4.c` runs each group of 32 codes as one bfloat16 tile product for up to 16 rows at once (the codes
turned into bfloat16 by or-ing them into the mantissa of 128.0), then scales the group's float32 tile by the
group's scale and offset: a whole decoding step's products cost 7.1 ms at one row and 11.0 at 16, against
7.2 and 32.9 on torch's kernel (`bench.compiled_products`), and a row's bits do not depend on the rows
beside it (the rule for every decoding kernel). Its sums are float32 over the file's own
codes, where torch's kernel rounds its output to bfloat16.

A CPU without AMX runs the same layout on `int4_avx2.c` (AVX2: each block's codes spread to bytes once a
call, then every row's integer dot products on rows rounded to int8 per group of 32, as llama.cpp rounds
them), where torch's int4 kernel is slower than float32 and its float16 product reads the weight once per
row (AVX2 emulated on the Xeon: a one-row step's products 26.5 ms, 16 rows 155 ms, on float16 copies). A CPU
with AVX-512 VNNI and no tiles (the Zen 4 EPYC) runs the same source built for VNNI: the same bits, a row's
chunk of 64 products one instruction. Those builds also run a checkpoint's 8-bit blocks
(`engine.kernels.int8_blocks`).

The C sources are compiled on the machine that runs them (`engine.loading.native_build`); this module knows
the layout, the call and the check a build must pass.
"""

from __future__ import annotations

import ctypes
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from engine.kernels.block_products import BLOCK

SOURCE = Path(__file__).with_name("tile_int4.c")
FLAGS = ("-O2", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512bf16", "-mamx-tile", "-mamx-bf16",
         "-fopenmp", "-shared", "-fPIC")  # OpenMP: the process's own runtime, the one torch loaded
CPU_FLAGS = ("avx512bw", "avx512_bf16", "amx_tile", "amx_bf16")  # /proc/cpuinfo's names
BACKEND = "tiles-" + hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]  # calibrations are kept per source
AVX2_SOURCE = Path(__file__).with_name("int4_avx2.c")  # the same entry points and layout, for CPUs without AMX
AVX2_HEADERS = tuple(Path(__file__).with_name(name) for name in ("int4_rows.h", "int4_vnni.h"))  # what it includes
AVX2_FLAGS = ("-O3", "-mavx2", "-mfma", "-mf16c", "-fopenmp", "-shared", "-fPIC")
AVX2_CPU_FLAGS = ("avx2", "fma", "f16c")
AVX2_BACKEND = "int4-avx2-" + hashlib.sha256(b"".join(p.read_bytes() for p in (AVX2_SOURCE, *AVX2_HEADERS))).hexdigest()[:12]
# the same source on AVX-512 VNNI (`DC_VNNI512`), for CPUs with it and no AMX tiles (the Zen 4 EPYC): the AVX2
# build's bits, its multi-row products 1.4-1.9x faster
VNNI_FLAGS = (*AVX2_FLAGS, "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512vnni", "-DDC_VNNI512")
VNNI_CPU_FLAGS = (*AVX2_CPU_FLAGS, "avx512bw", "avx512_vnni")
VNNI_BACKEND = "int4-vnni-" + AVX2_BACKEND.removeprefix("int4-avx2-")
_FORMS = (BACKEND, AVX2_BACKEND, VNNI_BACKEND)  # by `dc_tiles_form`


def backend(lib: ctypes.CDLL) -> str:
    """Which build `lib` is (calibrations are kept per kernel)."""
    return _FORMS[lib.dc_tiles_form()]


def bind(lib: ctypes.CDLL) -> ctypes.CDLL | None:
    """`lib` (the built source) ready to call, or None where this process may not use the tiles (Linux
    grants them per process) or its products are wrong (`checks`)."""
    if lib.dc_tiles_init() != 0:
        return None
    lib.dc_tiles_mm.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                ctypes.c_int, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                ctypes.c_int64, ctypes.c_int]
    lib.dc_tiles_mm.restype = ctypes.c_int
    lib.dc_tiles_form.restype = ctypes.c_int
    return lib if checks(lib) else None


def checks(lib: ctypes.CDLL) -> bool:
    """A product of random codes with a LoRA's input columns against float64, of three rows and of twenty
    (two tile passes), each row also alone, and with the LoRA in float16: a kernel that computes wrong
    products, gives a row other bits beside others or reads float16 otherwise never serves."""
    generator = torch.Generator().manual_seed(0)
    codes = torch.randint(0, 16, (32, 96), generator=generator, dtype=torch.int32)
    scale = torch.rand(32, 3, generator=generator).to(torch.bfloat16).float() / 8
    offset = torch.randn(32, 3, generator=generator).to(torch.bfloat16).float() / 8
    down = (torch.randn(8, 60, generator=generator) / 8).half().float()  # float16's values, given either way
    product = TileInt4Product(pack(codes, scale, offset), lib)
    for rows in (3, 20):
        x = torch.randn(rows, 60, generator=generator)
        y = product(x, down)
        wide = expected(F.pad(torch.cat([x, x @ down.T], 1), (0, 28)), codes, scale, offset, lib.dc_tiles_form() != 0)
        alone = torch.cat([product(x[i : i + 1], down) for i in range(rows)])
        if not (torch.allclose(y.double(), wide, rtol=1e-2, atol=1e-2) and torch.equal(alone, y)
                and torch.equal(product(x, down.half()), y)):
            return False
    return True


def int8_rows(x: torch.Tensor) -> torch.Tensor:
    """x (rows, K: a multiple of 32) as the AVX2 kernel multiplies it by the codes: each group of 32 rounded
    to int8 steps of its largest magnitude / 127 (float64)."""
    groups = x.float().reshape(x.shape[0], -1, BLOCK)
    amax = groups.abs().amax(-1, keepdim=True)
    codes = torch.round(groups * torch.where(amax > 0, 127.0 / amax, 0.0))
    return (codes.double() * (amax / 127.0).double()).reshape(x.shape)


def expected(rows: torch.Tensor, codes: torch.Tensor, scale: torch.Tensor, offset: torch.Tensor,
             avx2: bool) -> torch.Tensor:
    """What a kernel's product of `rows` (rows, K) by the weight of `pack`'s arguments should be, in
    float64, with the rows rounded as the kernel rounds them: to bfloat16 on the tiles; on AVX2 to int8
    (`int8_rows`) in the codes' products, float32 in the offsets' (the groups' sums)."""
    coded = codes.double() * scale.double().repeat_interleave(BLOCK, 1)
    shifted = (offset.double() - 8 * scale.double()).repeat_interleave(BLOCK, 1)
    if avx2:
        return int8_rows(rows) @ coded.T + rows.double() @ shifted.T
    return rows.to(torch.bfloat16).double() @ (coded + shifted).T


def pack(codes: torch.Tensor, scale: torch.Tensor, offset: torch.Tensor) -> torch.Tensor:
    """The kernel's layout of a weight (N, K) given as codes 0..15 (N, K) with a scale and an offset per
    group of 32 (N, K / 32; w = (q - 8) * scale + offset, both rounded to bfloat16): per 16 outputs and
    group, 256 bytes of codes (`tile_int4.c` says how they pair) then the 16 scales and 16 offsets."""
    n, k = codes.shape
    groups = k // BLOCK
    q = codes.to(torch.uint8).view(n // 16, 16, groups, 8, 2, 2)  # block, output, group, chunk, nibble, pair
    nibbles = (q[..., 0, :] | (q[..., 1, :] << 4)).permute(0, 2, 3, 1, 4).reshape(n // 16, groups, 256)
    scales = torch.stack([scale, offset]).to(torch.bfloat16).view(2, n // 16, 16, groups).permute(1, 3, 0, 2)
    # contiguous before the byte view: with one block of outputs the reshape is a view of odd strides
    return torch.cat([nibbles, scales.reshape(n // 16, groups, 32).contiguous().view(torch.uint8)], -1).contiguous()


@dataclass(frozen=True)
class NativeProduct:
    """A weight (N, K) in a built kernel's layout (N / 16 blocks of 16 outputs, K / 32 groups, the bytes of
    one block's group last) and the kernel's entry point in `lib`."""

    weights: torch.Tensor
    lib: ctypes.CDLL
    n: int = field(init=False)
    k: int = field(init=False)
    # what each call passes, found once: a decoding step makes 120 calls, where Python's share of one was
    # 7-9 us against the kernel's 15 (SmolLM2's o_proj, one row)
    _mm: Any = field(init=False, repr=False, compare=False)
    _address: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, value in (("n", self.weights.shape[0] * 16), ("k", self.weights.shape[1] * BLOCK),
                            ("_mm", self._entry()), ("_address", self.weights.data_ptr())):
            object.__setattr__(self, name, value)

    def _entry(self) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class TileInt4Product(NativeProduct):
    """x (..., K or fewer columns: the missing ones are zero) times a weight (N, K) in `pack`'s layout
    (N / 16, K / 32, 320 bytes), in float32, on the built kernel `lib` (`bind`)."""

    down_dtypes: ClassVar[tuple[torch.dtype, ...]] = (torch.float32, torch.float16)  # what `down` may be

    def _entry(self) -> Any:
        return self.lib.dc_tiles_mm

    @property
    def backend(self) -> str:
        """The built kernel it runs on (calibrations are kept per kernel)."""
        return backend(self.lib)

    def tensors(self) -> dict[str, torch.Tensor]:
        return {"tiles": self.weights}

    def __call__(self, x: torch.Tensor, down: torch.Tensor | None = None) -> torch.Tensor:
        """x, followed by its products by `down` (a LoRA's down-projection, (rank, x's columns) float32 or
        float16, contiguous) when given, then zeros, times the weight. The down-projection's products are
        summed in float32 in a fixed order, so a row gets the same bits beside other rows, and a float16
        `down` gives the bits its float32 values give."""
        width = x.shape[-1]
        rank = 0 if down is None else down.shape[0]
        if width + rank > self.k:
            raise ValueError(f"{width} + {rank} input columns for a product of {self.k}")
        if down is not None and down.shape[1] != width:
            raise ValueError(f"a down-projection of {down.shape[1]} columns for {width} input columns")
        rows = x.reshape(-1, width)
        if rows.dtype != torch.float32 or rows.stride(-1) != 1:
            rows = rows.float().contiguous()
        y = torch.empty(rows.shape[0], self.n)
        if down is None:
            down_address, half = None, 0
        else:
            if down.dtype not in self.down_dtypes or not down.is_contiguous():
                raise ValueError(f"a down-projection of {down.dtype}, contiguous: {down.is_contiguous()}")
            down_address, half = down.data_ptr(), int(down.dtype is torch.float16)
        if rows.shape[0] and self._mm(rows.data_ptr(), rows.shape[0], width, rows.stride(0), down_address, half, rank,
                                      self._address, y.data_ptr(), self.n, self.k, torch.get_num_threads()) != 0:
            raise MemoryError("the int4 kernel could not allocate its input rows")
        return y.view(*x.shape[:-1], self.n)
