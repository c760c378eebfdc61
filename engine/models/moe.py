"""A sparse mixture-of-experts feed-forward block with shared experts and a group-limited sigmoid router
(the DeepSeek-V3 router, which Ling-v2 and so LLaDA2.x use), under Hugging Face parameter names:
`gate.weight`, `gate.expert_bias`, `experts.{j}.{gate,up,down}_proj.weight`, `shared_experts.*`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from engine.models.layers import Adapt, SwiGLU


@dataclass(frozen=True)
class MoEShape:
    experts: int
    per_token: int
    inner: int  # each expert's intermediate size
    shared: int  # shared experts (one SwiGLU of shared * inner)
    groups: int = 1
    top_groups: int = 1
    scaling: float = 1.0  # routed_scaling_factor


class Router(nn.Module):
    """Sigmoid scores; experts are chosen by score plus `expert_bias` within the best `top_groups` groups
    (a group ranked by its two best experts); their weights are the plain scores, normalised to sum to one
    (when more than one expert is chosen) and scaled by `scaling`. Routing runs in float32."""

    expert_bias: torch.Tensor  # a buffer

    def __init__(self, hidden: int, shape: MoEShape) -> None:
        super().__init__()
        self.shape = shape
        self.weight = nn.Parameter(torch.empty(shape.experts, hidden))
        self.register_buffer("expert_bias", torch.zeros(shape.experts))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(experts (N, k), weights (N, k)) for the rows of x (N, hidden)."""
        s = self.shape
        scores = F.linear(x.float(), self.weight.float()).sigmoid()
        choice = scores + self.expert_bias.float()
        per_group = choice.view(-1, s.groups, s.experts // s.groups)
        group_score = per_group.topk(min(2, per_group.shape[-1]), dim=-1).values.sum(-1)
        best_groups = group_score.topk(s.top_groups, dim=-1).indices
        allowed = torch.zeros_like(group_score, dtype=torch.bool).scatter_(1, best_groups, True)
        allowed = allowed[:, :, None].expand_as(per_group).reshape(-1, s.experts)
        chosen = choice.masked_fill(~allowed, float("-inf")).topk(s.per_token, dim=-1).indices
        weights = scores.gather(1, chosen)
        if s.per_token > 1:
            weights = weights / (weights.sum(-1, keepdim=True) + 1e-20)
        return chosen, weights * s.scaling


class SparseMoE(nn.Module):
    """Routed experts plus shared experts; `forward` has `SwiGLU`'s signature, so it replaces a block's MLP."""

    def __init__(self, hidden: int, shape: MoEShape) -> None:
        super().__init__()
        self.gate = Router(hidden, shape)
        self.experts = nn.ModuleList(SwiGLU(hidden, shape.inner) for _ in range(shape.experts))
        self.shared_experts = SwiGLU(hidden, shape.inner * shape.shared) if shape.shared else None

    def forward(self, x: torch.Tensor, adapt: Adapt | None = None, layer: int = 0) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        chosen, weights = self.gate(rows)
        out = torch.zeros_like(rows)
        for e in chosen.unique().tolist():
            token, slot = (chosen == e).nonzero(as_tuple=True)
            y = self.experts[e](rows.index_select(0, token))
            out.index_add_(0, token, (y * weights[token, slot, None]).to(out.dtype))
        out = out.view_as(x)
        return out + self.shared_experts(x) if self.shared_experts is not None else out
