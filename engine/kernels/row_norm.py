"""RMSNorm of float32 rows in one small native call.

A decoding step runs 61 norms of one to sixteen rows of 576. torch's fused kernel takes 11-16 us a call
alone, and between a step's other work 35-60 (its dispatch is long, and the step's other code has pushed it
out of the caches): 2.3 ms of a 30 ms one-row step on the 2-core Xeon (cProfile). `row_norm.c` is a loop
the compiler vectorizes, a few microseconds a call. Each row is normalized alone, its sum of squares in a
fixed order, so a row's bits do not depend on the rows beside it.

The C source is compiled on the machine that runs it (`engine.loading.native_build`); a load gives the
built library to its model's norms (`layers.RMSNorm.native`), which call `run` in forwards that keep no
gradient.
"""

from __future__ import annotations

import ctypes
import hashlib
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("row_norm.c")
FLAGS = ("-O2", "-shared", "-fPIC")
CPU_FLAGS: tuple[str, ...] = ()
BACKEND = "norm-" + hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]


def bind(lib: ctypes.CDLL) -> ctypes.CDLL | None:
    """`lib` (the built source) ready to call, or None where its norms are wrong (`checks`)."""
    lib.dc_rms_norm.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                ctypes.c_float, ctypes.c_void_p]
    lib.dc_rms_norm.restype = None
    return lib if checks(lib) else None


def checks(lib: ctypes.CDLL) -> bool:
    """Norms of 5 rows of 200 (a part of 16 lanes) against float64, and each row alone."""
    generator = torch.Generator().manual_seed(0)
    x, weight = torch.randn(5, 200, generator=generator) * 3, torch.randn(200, generator=generator)
    out = run(lib, x, weight, 1e-5)
    want = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-5) * weight.double()
    alone = torch.cat([run(lib, x[i : i + 1], weight, 1e-5) for i in range(5)])
    return bool(torch.allclose(out.double(), want, rtol=1e-5, atol=1e-6) and torch.equal(alone, out))


def run(lib: ctypes.CDLL, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """x (..., D) float32 normalized by its root mean square and scaled by `weight` (D) float32."""
    rows = x.reshape(-1, x.shape[-1])
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    out = torch.empty(x.shape)
    lib.dc_rms_norm(rows.data_ptr(), rows.shape[0], rows.shape[1], rows.stride(0), weight.data_ptr(), eps,
                    out.data_ptr())
    return out


class RowNorm:
    """The built library as a norm's kernel, shared (not copied) by copies of a model."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib

    def __deepcopy__(self, memo: dict[int, object]) -> RowNorm:
        return self

    def __call__(self, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        return run(self.lib, x, weight, eps)


def usable(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Whether `run` serves this call: float32 on the CPU, a contiguous weight, nothing to differentiate."""
    return (x.dtype == torch.float32 and weight.dtype == torch.float32 and x.device.type == "cpu"
            and weight.is_contiguous() and not (torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad)))
