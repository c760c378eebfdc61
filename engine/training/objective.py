"""The masked-diffusion training objective of the Dream family, with shifted logits.

Per sequence t ~ U(eps, 1); each maskable position is replaced by the mask id with probability t; the loss
is the cross-entropy at the masked positions weighted by 1/t, summed and divided by the number of maskable
positions (the per-token ELBO estimate Dream and DiffuCoder train on). The division is per row, then rows
are averaged, so an infill canvas with a 20-token gap weighs as much as a fully maskable plain window.
Logits are shifted: the logit at position i predicts token i+1, so masked position j is scored with
logits[j - 1]; position 0 is always an unmasked BOS.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

DEFAULT_EPS = 1e-3


@dataclass(frozen=True)
class NoisedBatch:
    noisy: torch.Tensor  # [B, T] ids with masks applied
    masked: torch.Tensor  # [B, T] bool
    t: torch.Tensor  # [B] float

    def to(self, device: torch.device) -> NoisedBatch:
        return NoisedBatch(self.noisy.to(device), self.masked.to(device), self.t.to(device))


def add_noise(
    ids: torch.Tensor,
    maskable: torch.Tensor,
    mask_id: int,
    generator: torch.Generator | None = None,
    eps: float = DEFAULT_EPS,
    t: torch.Tensor | None = None,
) -> NoisedBatch:
    """Mask each maskable position with its row's probability t (drawn from U(eps, 1) unless given)."""
    batch = ids.shape[0]
    if t is None:
        # Stratified draw (one uniform offset, rows spread over [0, 1)): each row's t is still U(eps, 1),
        # but a small batch always spans the noise levels, which tames the variance of the 1/t weights.
        u = (torch.rand(1, generator=generator) + torch.arange(batch) / batch) % 1.0
        t = eps + (1 - eps) * u[torch.randperm(batch, generator=generator)]
    t = t.to(ids.device)
    draws = torch.rand(ids.shape, generator=generator).to(ids.device)
    masked = (draws < t[:, None]) & maskable
    masked[:, 0] = False
    empty = masked.sum(1) == 0
    if empty.any():
        # Guarantee one masked position per row so every row contributes; pick its first maskable slot.
        first = torch.argmax(maskable.int(), dim=1)
        rows = torch.nonzero(empty & maskable.any(1)).flatten()
        masked[rows, first[rows]] = True
    noisy = torch.where(masked, torch.full_like(ids, mask_id), ids)
    return NoisedBatch(noisy, masked, t)


def diffusion_loss(
    model: nn.Module, ids: torch.Tensor, maskable: torch.Tensor, noised: NoisedBatch
) -> tuple[torch.Tensor, torch.Tensor]:
    """(1/t-weighted loss per maskable token averaged over rows, unweighted mean CE over masked tokens)."""
    logits = model(noised.noisy)[:, :-1]
    targets = ids[:, 1:]
    masked = noised.masked[:, 1:]
    ce = F.cross_entropy(logits[masked].float(), targets[masked], reduction="none")
    rows = torch.nonzero(masked)[:, 0]
    per_row = torch.zeros(ids.shape[0], device=ids.device).index_add(0, rows, ce / noised.t[rows])
    loss = (per_row / maskable[:, 1:].sum(1).clamp(min=1)).mean()
    return loss, ce.mean().detach()
