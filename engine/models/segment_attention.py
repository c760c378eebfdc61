"""Attention of a wide anchored forward (a prefill) cut by segment, so that fixed text runs on the fused
causal kernel instead of through a canvas-wide mask.

Fixed text is causal over its own segment (models/anchored.py), so the rows of segment Fi need only the
keys of Fi up to themselves: with the whole segment as queries that is `is_causal` over its keys, which
skips the half of the products above the diagonal. One mask over all queries and all keys (plus the
right-context copies) instead runs every product, and the anchored family's per-head float mask of a
1,000-token prefill, rebuilt per layer, cost more than the attention itself (1.4 s of a 5.4 s prefill on a
2-core CPU). Gap rows keep the full mask, built for their rows only.

A `SegmentPlan` (the text parts' masks included) is computed once per forward from the layout; `attend`
runs each layer by it. Padding
queries (a row with fewer queries repeats its first) get their first query's output, as the plain path
gives them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from engine.models.layers import sdpa

WIDE = 64
"""Forwards with more query rows than this (a prefill, or the first step after a large edit) attend by
segment; fewer rows run one masked kernel, where the mask is small and one call costs least."""


@dataclass(frozen=True)
class TextPart:
    """Queries [first, last) of batch row `b`, all in one fixed segment, over its keys at canvas positions
    `keys` (from the segment's start to the last query); `mask` None when the queries are those keys one
    for one (`is_causal` then holds exactly), else (1, 1, n, keys) bool: a key no later than its query."""

    b: int
    first: int
    last: int
    keys: slice
    mask: torch.Tensor | None


def _text_part(b: int, first: int, last: int, keys_from: int, positions: torch.Tensor, last_position: int) -> TextPart:
    """The part of queries [first, last) at canvas `positions`, the last of them `last_position`."""
    keys = slice(keys_from, last_position + 1)
    if last - first == keys.stop - keys.start:
        return TextPart(b, first, last, keys, None)
    at = torch.arange(keys.start, keys.stop, device=positions.device)
    return TextPart(b, first, last, keys, (at[None, :] <= positions[:, None])[None, None])


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
            text.append(_text_part(b, i, j, starts[seg], query[b, i:j], row_query[j - 1]))
            i = j
        if gap_rows:
            gaps.append(GapPart(b, torch.tensor(gap_rows, dtype=torch.long, device=query.device)))
    return SegmentPlan(text, gaps, padding)


def attend(segment_plan: SegmentPlan, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
           gap_mask: Callable[[GapPart], torch.Tensor]) -> torch.Tensor:
    """Attention (B, H, Q, D) of queries `q` over keys `k`, `v` (B, H_kv, S + E, D) by `segment_plan`;
    `gap_mask(part)` is the (1, H or 1, n, S + E) mask of a gap part's rows."""
    out = q.new_empty(q.shape)
    for t in segment_plan.text:
        out[t.b : t.b + 1, :, t.first : t.last] = sdpa(
            q[t.b : t.b + 1, :, t.first : t.last], k[t.b : t.b + 1, :, t.keys], v[t.b : t.b + 1, :, t.keys],
            t.mask, t.mask is None)
    for g in segment_plan.gaps:
        rows = q[g.b : g.b + 1].index_select(2, g.rows)
        out[g.b : g.b + 1].index_copy_(2, g.rows, sdpa(rows, k[g.b : g.b + 1], v[g.b : g.b + 1], gap_mask(g)))
    for b, real in segment_plan.padding:
        out[b, :, real:] = out[b, :, :1]
    return out
