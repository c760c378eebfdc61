"""A decoding step's attention in one native call: keys read once for every row, a row's bits its own.

torch's fused CPU kernel rounds a query row differently among several rows than alone, and the exact form
built from torch's products (`engine.models.layers.attention_by_products`: two products and a softmax per
layer) keeps a row's bits only where the matrix library does not round by row count (the AMX Xeon; on the
Zen 4 EPYC it runs blocks of two rows, so the keys are read once per two rows). Either way a one-row
step's attention is a dozen small torch calls a layer: 11.3 ms of a 33 ms step after 1,024 tokens on the
2-core Xeon (`bench.step`), where the keys and values it reads are 25 MB. `row_attention.c` does a layer's
attention of every row in one call on AVX-512 BF16 (the Xeon and the Zen 4): per key head, each block of 16
keys is transposed once and every query row of the head's group multiplies it, so the cost hardly grows with
rows, and each row's arithmetic is the same sequence whatever rows run beside it. Scores and softmax are
float32; the weights meet the values rounded to bfloat16, two keys an instruction (torch's products round
the weights so too, and the scores). That vector form's work still grows with the rows (16 rows' attention
was 16 ms of a 44.5 ms step); on a CPU with AMX the same source built with `TILE_FLAGS` does the products on
tiles, whose cost hardly changes from 1 row to 16. A CPU with AVX2 and no AVX-512 BF16 runs
`row_attention_avx2.c` (float32 FMAs on keys and values widened once a call), where torch's products took
19 ms of a 53 ms one-row step (AVX2 emulated on the Xeon). The forms' bits differ, so a machine runs one form
at every row count (`engine.loading.native_build.attention_forms`: the best its CPU has).

The C sources are compiled on the machine that runs it (`engine.loading.native_build`); a load installs the
built library (`install`), and `attend` is what `decoding_attention` calls while one is installed.
"""

from __future__ import annotations

import ctypes
import hashlib
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("row_attention.c")  # AVX-512 BF16 vectors, or AMX tiles with DC_TILES
AVX2_SOURCE = Path(__file__).with_name("row_attention_avx2.c")
HEADER = Path(__file__).with_name("row_attention.h")  # what both sources include
SOURCES = (SOURCE, AVX2_SOURCE, HEADER)
FLAGS = ("-O3", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512bf16", "-fopenmp", "-shared", "-fPIC")
CPU_FLAGS = ("avx512bw", "avx512_bf16")  # /proc/cpuinfo's names
TILE_FLAGS = (*FLAGS, "-mamx-tile", "-mamx-bf16", "-DDC_TILES")
TILE_CPU_FLAGS = (*CPU_FLAGS, "amx_tile", "amx_bf16")
AVX2_FLAGS = ("-O3", "-mavx2", "-mfma", "-fopenmp", "-shared", "-fPIC")
AVX2_CPU_FLAGS = ("avx2", "fma")


def _digest(*paths: Path) -> str:
    return hashlib.sha256(b"".join(path.read_bytes() for path in paths)).hexdigest()[:12]


# calibrations are kept per form and source (`dc_row_attention_form` numbers the forms)
BACKEND = "rows-" + _digest(SOURCE, HEADER)
TILE_BACKEND = "tiles-" + _digest(SOURCE, HEADER)
AVX2_BACKEND = "rows-avx2-" + _digest(AVX2_SOURCE, HEADER)
_FORMS = (BACKEND, TILE_BACKEND, AVX2_BACKEND)

_installed: ctypes.CDLL | None = None


def bind(lib: ctypes.CDLL) -> ctypes.CDLL | None:
    """`lib` (the built source) ready to call, or None where its attention is wrong (`checks`)."""
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    lib.dc_row_attention.argtypes = [ptr, i64, i64, i64, ptr, i64, i64, ptr, i64, i64, ptr, i64, i64, i64, ptr,
                                     i64, i64, i64, i64, i64, i64, ctypes.c_float, ctypes.c_int]
    lib.dc_row_attention.restype = ctypes.c_int
    lib.dc_row_attention_form.restype = ctypes.c_int
    return lib if checks(lib) else None


def bind_tiles(lib: ctypes.CDLL) -> ctypes.CDLL | None:
    """`bind` for the tiles' build, None also where this process may not use the tiles (Linux grants them per
    process)."""
    return bind(lib) if lib.dc_tiles_init() == 0 else None


def install(lib: ctypes.CDLL | None) -> None:
    """Make `lib` (bound) the decoding attention of this process; None: torch's products again."""
    global _installed
    _installed = lib


def installed() -> ctypes.CDLL | None:
    return _installed


def backend(lib: ctypes.CDLL | None = None) -> str:
    """Which decoding attention `lib` (by default the installed one) is: "torch" for none, else the form and
    its source (calibrations are kept per attention: they time it)."""
    lib = lib or _installed
    if lib is None:
        return "torch"
    return _FORMS[lib.dc_row_attention_form()]


def checks(lib: ctypes.CDLL) -> bool:
    """Grouped-query attention of 7 rows over 300 keys (two chunks, the first all masked for some rows, and a
    partial block) against float64 from the same bfloat16 inputs, and each row alone: an attention that is
    wrong or gives a row other bits beside others never serves."""
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(2, 6, 7, 64, generator=generator).to(torch.bfloat16)
    k, v = torch.randn(2, 2, 2, 300, 64, generator=generator).to(torch.bfloat16)
    mask = torch.zeros(2, 6, 7, 300).masked_fill(torch.rand(2, 6, 7, 300, generator=generator) < 0.3, float("-inf"))
    mask[:, :, :3, :256] = float("-inf")
    mask[..., -1] = 0.0
    out = run(lib, q, k, v, mask)
    alone = torch.cat([run(lib, q[:, :, i : i + 1], k, v, mask[:, :, i : i + 1]) for i in range(7)], 2)
    # the weights are rounded to bfloat16: errors of 1e-3 of the values' scale, where a wrong sum is off by 1
    return bool(torch.allclose(out.double(), reference(q, k, v, mask), rtol=1e-2, atol=1e-2) and torch.equal(alone, out))


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The same attention in float64 (grouped-query: query head h reads key head h / (H / Hkv))."""
    groups = q.shape[1] // k.shape[1]
    scores = q.double() @ k.double().repeat_interleave(groups, 1).transpose(-1, -2) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores + mask.double()
    out: torch.Tensor = scores.softmax(-1) @ v.double().repeat_interleave(groups, 1)
    return out


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
           lib: ctypes.CDLL | None = None) -> torch.Tensor | None:
    """`run` on `lib` or the installed library; None where neither is there or the inputs are not what it
    takes (bfloat16 q, keys and values on the CPU, D a multiple of 32 up to 256, an additive float mask), for
    the caller's torch form to answer."""
    lib = lib or _installed
    d = q.shape[-1]
    if (lib is None or q.dtype != torch.bfloat16 or k.dtype != torch.bfloat16 or v.dtype != torch.bfloat16
            or d % 32 or d > 256 or q.device.type != "cpu" or q.shape[1] % k.shape[1] or not k.shape[2]
            or (mask is not None and mask.dtype != torch.float32)):
        return None
    return run(lib, q, k, v, mask)


def run(lib: ctypes.CDLL, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """softmax(q k^T / sqrt(D) + mask) v in float32, (B, H, R, D) (a view of a (B, R, H, D) tensor, which the
    caller's merge of the heads reads without a copy), for inputs `attend` accepts."""
    b, h, rows, d = q.shape
    q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
    if k.stride(-2) != d or v.stride(-2) != d:
        k, v = k.contiguous(), v.contiguous()
    strides = (0, 0, 0)
    if mask is not None:
        mask = mask.expand(b, mask.shape[1], rows, k.shape[2])
        if mask.stride(-1) != 1:
            mask = mask.contiguous()
        strides = (mask.stride(0), mask.stride(1) if mask.shape[1] > 1 else 0, mask.stride(2))
    out = torch.empty(b, rows, h, d)
    if lib.dc_row_attention(q.data_ptr(), q.stride(0), q.stride(1), q.stride(2), k.data_ptr(), k.stride(0),
                            k.stride(1), v.data_ptr(), v.stride(0), v.stride(1),
                            None if mask is None else mask.data_ptr(), *strides, out.data_ptr(), b, h, k.shape[1],
                            rows, k.shape[2], d, d**-0.5, torch.get_num_threads()) != 0:
        raise MemoryError("the decoding attention could not allocate its scores")
    return out.transpose(1, 2)
