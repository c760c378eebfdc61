"""int8 weights with dynamic activation quantization for the linear layers, on the CPU (`dtype="int8"`);
`engine.loading.quantize.quantize_int8` swaps them into a built model.

A CPU forward of a small model is bound by streaming its weights: at one query row SmolLM2-135M's linear
layers take about three times longer in fp32 than with fbgemm's int8 kernels (`torch.ops.quantized.
linear_dynamic`: per-channel int8 weights, activations quantized per call). But those kernels quantize
activations per tensor, and SmolLM2's activations have outlier channels: the input of q/k/v and of the
output head (after RMSNorm) and of down_proj reaches 100-3000 in a few channels where the rest are under
10, so one scale per tensor wipes out the other channels and the model writes garbage (measured: every
one of those three swapped alone breaks greedy decoding). Only gate/up and o_proj, whose inputs have no
such outliers, are swapped; embeddings, norms, attention, the other projections and the adapter stay fp32.
bench.speed measures what it buys (`--dtype int8`).
"""

from __future__ import annotations

import warnings

import torch

from engine.kernels.projections import Adapt, FusedProjections


def _pack(weight: torch.Tensor, bias: torch.Tensor | None) -> object:
    w = weight.detach().float()
    scale = (w.abs().amax(1) / 127).clamp(min=1e-12).double()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # quantized tensors are deprecated in favour of torchao
        q = torch.quantize_per_channel(w, scale, torch.zeros_like(scale, dtype=torch.long), 0, torch.qint8)
    return torch.ops.quantized.linear_prepack(q, None if bias is None else bias.detach().float())


class Int8Projections:
    """`FusedProjections` with int8 weights; an adapter changes each output by name (no folded LoRA)."""

    def __init__(self, fused: FusedProjections) -> None:
        self.names, self.sizes = fused.names, fused.sizes
        self.packed = _pack(fused.weight, fused.bias)

    def __call__(self, x: torch.Tensor, adapt: Adapt | None, layer: int) -> tuple[torch.Tensor, ...]:
        y = torch.ops.quantized.linear_dynamic(x.reshape(-1, x.shape[-1]), self.packed)
        ys = torch.split(y.view(*x.shape[:-1], y.shape[-1]), self.sizes, dim=-1)
        if adapt is None:
            return ys
        return tuple(adapt.project(layer, name, x, out) for name, out in zip(self.names, ys))
