"""The rows of a running denoising loop, when they change between steps.

With a `RowFeed` (engine.batcher's), the loop is continuous: before each step it asks the feed for more
requests, whose rows join the batch (their canvases are prefilled by that step's forward like any new
row's), and every row that is done (filled, or left because its cancel fired) is handed to the feed and
taken out of the batch, so the rows still running carry on with the newcomers. Without a feed the loop
runs the rows it was given and returns them all at the end.

`LoopRows` is the loop's per-row bookkeeping in batch-row order; `index[b]` is the position of batch row
b's request among every request the loop has taken (the first call's 0..n-1, then each joiner's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

from engine.requests import InfillRequest, InfillResult, Stats


class RowFeed(Protocol):
    def admit(self) -> list[InfillRequest]:
        """Requests that join the running loop now (they share its params); [] for none."""
        ...

    def done(self, index: int, result: InfillResult) -> None:
        """The request taken `index`-th is done: its row has left the batch."""
        ...

    def stepped(self, rows: int) -> None:
        """The loop ran one step over `rows` rows."""
        ...


@dataclass
class LoopRows:
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
