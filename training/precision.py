"""The training's number format: float32, or the frozen base in bfloat16 under autocast where the CPU has
bfloat16 units (AMX tiles or AVX-512-BF16), with the adapter and the optimizer kept in float32.

On the 2-core Xeon with AMX one thread runs a 1,500 x 576 x 1,536 product at about 870 GFLOP/s in bfloat16
against 136 in float32, and most of a training step is such products (the base's, forward and backward to
the adapter's inputs). The base's weights are stored in bfloat16 (autocast would otherwise cast every frozen
weight on every call: it caches only the casts of leaves that take a gradient); the adapter's float32
weights are cast once per autocast region; the loss is taken in float32.
"""

from __future__ import annotations

import contextlib
from typing import Literal

import torch

from engine.models.anchored import AnchoredModel

Precision = Literal["float32", "bfloat16"]


def cpu_has_bfloat16() -> bool:
    """Whether oneDNN runs bfloat16 products natively here (the engine asks the same question)."""
    return bool(torch.backends.mkldnn.is_available()  # type: ignore[no-untyped-call]
                and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def choose(asked: str, device: torch.device) -> Precision:
    """`auto`: bfloat16 on CUDA or on a CPU with bfloat16 units, else float32."""
    if asked in ("float32", "bfloat16"):
        return asked  # type: ignore[return-value]
    if asked != "auto":
        raise SystemExit(f"--dtype {asked!r}: expected auto, float32 or bfloat16")
    return "bfloat16" if device.type == "cuda" or cpu_has_bfloat16() else "float32"


def prepare(model: AnchoredModel, precision: Precision) -> None:
    """Store the frozen base in the training's format; the adapter stays float32."""
    if precision == "bfloat16":
        model.model.to(torch.bfloat16)
        model.lm_head.to(torch.bfloat16)
    model.adapter.float()


def autocast(precision: Precision, device: torch.device) -> contextlib.AbstractContextManager[object]:
    if precision == "float32":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)
