"""The loop's bookkeeping of its rows (which request each row is, its counts and its schedule), which the
commit policies read: beside the seam, below the loop's state."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.types import InfillRequest, Stats


@dataclass
class LoopRows:
    """The loop's per-row bookkeeping in batch-row order; `index[b]` is the position of batch row b's
    request among every request the loop has taken (the first call's 0..n-1, then each joiner's)."""

    requests: list[InfillRequest]
    index: list[int]
    stats: list[Stats]
    left: list[bool]  # rows whose cancel fired
    initial: torch.Tensor  # (B,) masks when the row (re)started its schedule
    row_steps: torch.Tensor  # (B,) steps its schedule has (reference rule)
    row_step: torch.Tensor  # (B,) steps it has run of that schedule

    @classmethod
    def start(cls, requests: list[InfillRequest], masked: torch.Tensor, steps: int | None, first: int) -> LoopRows:
        initial = masked.sum(-1)
        row_steps = initial.clamp(min=1) if steps is None else torch.full_like(initial, steps)
        return cls(list(requests), list(range(first, first + len(requests))), [Stats() for _ in requests],
                   [False] * len(requests), initial, row_steps, torch.zeros_like(initial))

    def extend(self, other: LoopRows) -> None:
        self.requests += other.requests
        self.index += other.index
        self.stats += other.stats
        self.left += other.left
        self.initial = torch.cat([self.initial, other.initial])
        self.row_steps = torch.cat([self.row_steps, other.row_steps])
        self.row_step = torch.cat([self.row_step, other.row_step])

    def keep(self, rows: list[int]) -> None:
        self.requests = [self.requests[b] for b in rows]
        self.index = [self.index[b] for b in rows]
        self.stats = [self.stats[b] for b in rows]
        self.left = [self.left[b] for b in rows]
        picked = torch.tensor(rows, dtype=torch.long, device=self.initial.device)
        self.initial, self.row_steps, self.row_step = (t[picked] for t in (self.initial, self.row_steps, self.row_step))

    def counted(self, active: torch.Tensor, positions: torch.Tensor, seconds: float = 0.0) -> None:
        """A step of `seconds` ran over the `active` rows (B,), `positions` (B,) canvas positions of each:
        a forward for each row that ran any (a step whose logits were all kept runs none); a row's first
        step is its prompt's evaluation."""
        for b, stat in enumerate(self.stats):
            if not int(active[b]):
                continue
            if not stat.forward_passes and not stat.step_seconds:
                stat.prompt_positions, stat.prompt_seconds = int(positions[b]), seconds
            stat.forward_passes += int(positions[b]) > 0
            stat.positions += int(positions[b])
            stat.step_seconds += seconds
