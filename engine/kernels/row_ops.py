"""A step's small row operations in native calls: RMSNorm and the rotary embedding of float32 rows.

A decoding step runs 61 norms of one to sixteen rows of 576 and 60 rotations (queries and keys of 30
layers). torch's kernels take 11-16 us a call alone, and between a step's other work 35-60 (their dispatch
is long, and the step's other code has pushed them out of the caches): the norms were 2.3 ms of a 30 ms
one-row step on the 2-core Xeon, the rotations (three ops each) about 1 ms at one row and 2-3 ms at 16
(cProfile). `row_ops.c` is two loops the compiler vectorizes, a few microseconds a call. Each row is
computed alone (a norm's sum of squares in a fixed order), so a row's bits do not depend on the rows beside
it; the rotation rounds each product and the sum as torch does, so its bits are torch's.

The C source is compiled on the machine that runs it (`engine.loading.native_build`); a load gives the
built library to its model's norms and attention modules (their `native`), which call it in forwards that
keep no gradient.
"""

from __future__ import annotations

import ctypes
import hashlib
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("row_ops.c")
FLAGS = ("-O2", "-ffp-contract=off", "-shared", "-fPIC")
CPU_FLAGS: tuple[str, ...] = ()
BACKEND = "ops-" + hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]


def bind(lib: ctypes.CDLL) -> ctypes.CDLL | None:
    """`lib` (the built source) ready to call, or None where its results are wrong (`checks`)."""
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    lib.dc_rms_norm.argtypes = [ptr, i64, i64, i64, ptr, ctypes.c_float, ptr]
    lib.dc_rms_norm.restype = None
    lib.dc_rotate.argtypes = [ptr, i64, i64, i64, i64, i64, i64, i64, ptr, ptr, i64, i64, ptr]
    lib.dc_rotate.restype = None
    return lib if checks(lib) else None


def checks(lib: ctypes.CDLL) -> bool:
    """Norms of 5 rows of 200 (a part of 16 lanes) against float64, and each row alone; a rotation of
    transposed queries with the bits of torch's form (`layers.apply_rotary`: the halves swapped by a flip)."""
    generator = torch.Generator().manual_seed(0)
    x, weight = torch.randn(5, 200, generator=generator) * 3, torch.randn(200, generator=generator)
    out = norm(lib, x, weight, 1e-5)
    want = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-5) * weight.double()
    alone = torch.cat([norm(lib, x[i : i + 1], weight, 1e-5) for i in range(5)])
    q = torch.randn(2, 3, 4, 64, generator=generator).transpose(1, 2)
    cos, sin = torch.randn(2, 2, 1, 3, 64, generator=generator)
    torch_form = q * cos + q.reshape(2, 4, 3, 2, 32).flip(-2).reshape(q.shape) * sin
    return bool(torch.allclose(out.double(), want, rtol=1e-5, atol=1e-6) and torch.equal(alone, out)
                and torch.equal(rotate(lib, q, cos, sin), torch_form))


def norm(lib: ctypes.CDLL, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """x (..., D) float32 normalized by its root mean square and scaled by `weight` (D) float32."""
    rows = x.reshape(-1, x.shape[-1])
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    out = torch.empty(x.shape)
    lib.dc_rms_norm(rows.data_ptr(), rows.shape[0], rows.shape[1], rows.stride(0), weight.data_ptr(), eps,
                    out.data_ptr())
    return out


def rotate(lib: ctypes.CDLL, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """`layers.apply_rotary(x, cos, sin)` for x (B, H, T, D) float32 and full-width tables (B or 1, 1, T, D):
    the same values and bits, laid out (B, T, H, D) as torch lays out its result for the attention module's
    transposed queries and keys."""
    b, h, t, d = x.shape
    if x.stride(-1) != 1:
        x = x.contiguous()
    cos, sin = (table if table.stride(-1) == 1 else table.contiguous() for table in (cos, sin))
    if cos.stride() != sin.stride():
        cos, sin = cos.contiguous(), sin.contiguous()
    out = torch.empty(b, t, h, d)
    lib.dc_rotate(x.data_ptr(), b, h, t, d, x.stride(0), x.stride(1), x.stride(2), cos.data_ptr(), sin.data_ptr(),
                  cos.stride(0) if cos.shape[0] > 1 else 0, cos.stride(2), out.data_ptr())
    return out.transpose(1, 2)


class RowOps:
    """The built library as a module's kernel, shared (not copied) by copies of a model."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib

    def __deepcopy__(self, memo: dict[int, object]) -> RowOps:
        return self

    def norm(self, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        return norm(self.lib, x, weight, eps)

    def rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        return rotate(self.lib, x, cos, sin)


def _no_grad(*tensors: torch.Tensor) -> bool:
    return not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors))


def usable(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Whether `norm` serves this call: float32 on the CPU, a contiguous weight, nothing to differentiate."""
    return (x.dtype == torch.float32 and weight.dtype == torch.float32 and x.device.type == "cpu"
            and weight.is_contiguous() and _no_grad(x, weight))


def rotatable(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> bool:
    """Whether `rotate` serves this call: float32 on the CPU, tables as wide as the head (no partial rotary)
    and one per batch row or one for all, nothing to differentiate."""
    return (x.dtype == cos.dtype == sin.dtype == torch.float32 and x.device.type == "cpu" and x.dim() == 4
            and cos.shape == sin.shape and cos.dim() == 4 and cos.shape[-1] == x.shape[-1]
            and cos.shape[1] == 1 and cos.shape[2] == x.shape[2] and cos.shape[0] in (1, x.shape[0])
            and _no_grad(x, cos, sin))
