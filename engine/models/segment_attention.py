"""Attention of a wide anchored forward (a prefill) cut by segment, so that fixed text runs on the fused
causal kernel instead of through a canvas-wide mask.

Fixed text is causal over its own segment (models/anchored.py), so the rows of segment Fi need only the
keys of Fi up to themselves: with the whole segment as queries that is `is_causal` over its keys, which
skips the half of the products above the diagonal. One mask over all queries and all keys (plus the
right-context copies) instead runs every product, and the anchored family's per-head float mask of a
1,000-token prefill, rebuilt per layer, cost more than the attention itself (1.4 s of a 5.4 s prefill on a
2-core CPU). Gap rows keep the full mask, built for their rows only.

A `SegmentPlan` is computed once per forward from the layout; `attend` runs each layer by it. Padding
queries (a row with fewer queries repeats its first) get their first query's output, as the plain path
gives them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

WIDE = 64
"""Forwards with more query rows than this (a prefill, or the first step after a large edit) attend by
segment; fewer rows run one masked kernel, where the mask is small and one call costs least."""


@dataclass(frozen=True)
class TextPart:
    """Queries [first, last) of batch row `b` (canvas positions `positions`), all in one fixed segment
    whose keys start at canvas position `keys_from`."""

    b: int
    first: int
    last: int
    keys_from: int
    positions: torch.Tensor

    @property
    def keys_to(self) -> int:
        return int(self.positions[-1]) + 1

    def mask(self) -> torch.Tensor | None:
        """None when the queries are the segment's keys one for one (`is_causal` then holds exactly),
        else (1, 1, n, keys) bool: a key no later than its query."""
        n = self.last - self.first
        if n == self.keys_to - self.keys_from:
            return None
        keys = torch.arange(self.keys_from, self.keys_to, device=self.positions.device)
        return (keys[None, :] <= self.positions[:, None])[None, None]


@dataclass(frozen=True)
class GapPart:
    """The gap queries `rows` (indices into the forward's queries) of batch row `b`."""

    b: int
    rows: torch.Tensor


@dataclass(frozen=True)
class SegmentPlan:
    text: list[TextPart]
    gaps: list[GapPart]
    padding: list[tuple[int, int]]  # (b, real queries) for rows whose queries are padded after that many


def plan(segments: torch.Tensor, query: torch.Tensor) -> SegmentPlan:
    """The parts of a forward whose queries are canvas positions `query` (B, Q), sorted per row, from the
    canvas `segments` (B, S): even numbers fixed text, odd gaps, -1 padding."""
    text: list[TextPart] = []
    gaps: list[GapPart] = []
    padding: list[tuple[int, int]] = []
    seg_rows = segments.tolist()
    for b, (row_segments, row_query) in enumerate(zip(seg_rows, query.tolist())):
        real = len(row_query)
        while real > 1 and row_query[real - 1] == row_query[0]:
            real -= 1
        if real < len(row_query):
            padding.append((b, real))
        starts: dict[int, int] = {}
        for position, seg in enumerate(row_segments):
            starts.setdefault(seg, position)
        gap_rows: list[int] = []
        i = 0
        while i < real:
            seg = row_segments[row_query[i]]
            if seg % 2 == 1:
                gap_rows.append(i)
                i += 1
                continue
            j = i
            while j < real and row_segments[row_query[j]] == seg:
                j += 1
            text.append(TextPart(b, i, j, starts[seg], query[b, i:j]))
            i = j
        if gap_rows:
            gaps.append(GapPart(b, torch.tensor(gap_rows, dtype=torch.long, device=query.device)))
    return SegmentPlan(text, gaps, padding)


Sdpa = Callable[..., torch.Tensor]


def attend(segment_plan: SegmentPlan, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
           gap_mask: Callable[[GapPart], torch.Tensor], sdpa: Sdpa) -> torch.Tensor:
    """Attention (B, H, Q, D) of queries `q` over keys `k`, `v` (B, H_kv, S + E, D) by `segment_plan`;
    `gap_mask(part)` is the (1, H or 1, n, S + E) mask of a gap part's rows; `sdpa(q, k, v, mask,
    is_causal)` the kernel."""
    out = q.new_empty(q.shape)
    for t in segment_plan.text:
        keys = slice(t.keys_from, t.keys_to)
        mask = t.mask()
        out[t.b : t.b + 1, :, t.first : t.last] = sdpa(
            q[t.b : t.b + 1, :, t.first : t.last], k[t.b : t.b + 1, :, keys], v[t.b : t.b + 1, :, keys],
            mask, mask is None)
    for g in segment_plan.gaps:
        rows = q[g.b : g.b + 1].index_select(2, g.rows)
        out[g.b : g.b + 1].index_copy_(2, g.rows, sdpa(rows, k[g.b : g.b + 1], v[g.b : g.b + 1], gap_mask(g), False))
    for b, real in segment_plan.padding:
        out[b, :, real:] = out[b, :, :1]
    return out
