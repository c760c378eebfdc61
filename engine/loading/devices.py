"""The device and compute dtype a load asks for, checked against this machine."""

from __future__ import annotations

import torch

from engine.types import ModelLoadError

INT8 = "int8"


def engine_choice(dtype: str | None) -> bool:
    """Whether `dtype` leaves the kernels to the engine (no dtype asked for): only then may a load run
    reduced-precision copies and the checkpoint's own blocks, which do not keep float32 results."""
    return dtype in (None, "", "auto")


def pick_device(device: str | None) -> torch.device:
    if device in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ModelLoadError(f"device {device!r}: not a torch device (use cpu, cuda, cuda:N or auto)") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError(f"device {device!r}: CUDA is not available on this machine")
    return dev


def pick_dtype(dtype: str | None, device: torch.device) -> torch.dtype:
    """The compute dtype; "int8" (CPU only) computes in float32 with int8 linear weights
    (`engine.kernels.int8`)."""
    if engine_choice(dtype):
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    table = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16,
             "bf16": torch.bfloat16, "float16": torch.float16, "fp16": torch.float16, INT8: torch.float32}
    if dtype not in table:
        raise ModelLoadError(f"dtype {dtype!r}: use one of {', '.join(table)}")
    if dtype == INT8 and device.type != "cpu":
        raise ModelLoadError(f"dtype {dtype!r}: int8 weights are for the CPU (device {device})")
    return table[dtype]
