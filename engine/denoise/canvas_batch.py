"""The tensors of a batch of canvases being denoised, and the span bookkeeping around them.

Rows are right-padded with the pad id; `real` marks non-pad positions. A span is a maximal run of
positions that were masks in the request; `grow` inserts more masks at a span's end.

A family may keep a row's `pads` positions after its canvas (from `lengths[b]` on, `real` False there):
masks it decodes with a span that are no part of the request (the block families pad a gap's last block
with them, `engine/families/block_layout.py`). They are never in `masked`, never returned, and the batch
keeps them through growth and rows joining or leaving.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch

from engine.types import Lead, Reference, SpanEnd


@dataclass
class RowSpans:
    spans: list[list[int]]  # [start, end) per span, in canvas positions
    grown: int = 0
    max_grow: int = 0
    stops: tuple[frozenset[int], ...] = ()  # per span, tokens that end it like an end token
    leads: tuple[Lead | None, ...] = ()  # per span, text it must start with
    ends: tuple[SpanEnd | None, ...] = ()  # per span, when its text is complete
    finished: set[int] = field(default_factory=set)  # spans ended by their SpanEnd: never grown
    refs: tuple[Reference | None, ...] = ()  # per span, the text it replaces (`engine.denoise.margins`)
    rivals: tuple[Reference | None, ...] = ()  # per span, another text weighed against it
    margins: dict[int, float] = field(default_factory=dict)  # per span, once it left its reference
    rival_margins: dict[int, float] = field(default_factory=dict)
    kept: dict[int, int] = field(default_factory=dict)  # per span, leading tokens checked to keep it
    asked: dict[int, int] = field(default_factory=dict)  # per span, the longest prefix its SpanEnd was asked
    pads: int = 0  # positions after the canvas a family decodes with its first open span (module docstring)

    def stops_of(self, span: int) -> frozenset[int]:
        return self.stops[span] if span < len(self.stops) else frozenset()

    def lead_of(self, span: int) -> Lead | None:
        return self.leads[span] if span < len(self.leads) else None

    def end_of(self, span: int) -> SpanEnd | None:
        return self.ends[span] if span < len(self.ends) else None

    def ref_of(self, span: int) -> Reference | None:
        return self.refs[span] if span < len(self.refs) else None

    def rival_of(self, span: int) -> Reference | None:
        return self.rivals[span] if span < len(self.rivals) else None


def find_spans(ids: list[int], mask_id: int) -> list[list[int]]:
    spans: list[list[int]] = []
    for i, tok in enumerate(ids):
        if tok != mask_id:
            continue
        if spans and spans[-1][1] == i:
            spans[-1][1] = i + 1
        else:
            spans.append([i, i + 1])
    return spans


def query_positions(need: torch.Tensor) -> torch.Tensor:
    """(B, Q) sorted canvas positions where need (B, L) is True; rows with fewer repeat their first
    entry (a repeated query writes the same K/V twice), rows with none run position 0."""
    length = need.shape[1]
    pos = torch.arange(length, device=need.device).expand_as(need)
    width = max(int(need.sum(-1).max()), 1)
    order = torch.where(need, pos, pos + length).sort(-1).values[:, :width]
    first = torch.where(order[:, :1] < length, order[:, :1], 0)
    return torch.where(order < length, order, first)


@dataclass
class CanvasBatch:
    x: torch.Tensor  # (B, L) token ids
    real: torch.Tensor  # (B, L) bool, False on padding
    rows: list[RowSpans]
    mask_id: int
    pad_id: int
    lengths: list[int] = field(default_factory=list)
    drafts: torch.Tensor | None = None  # (B, L) bool: tokens written as drafts, not yet verified
    live: torch.Tensor | None = None  # (B,) bool: False for a row that left the batch (`leave`)

    @classmethod
    def build(cls, canvases: list[list[int]], max_grow: list[int], mask_id: int, pad_id: int, device: torch.device | str,
              stops: list[tuple[frozenset[int], ...]] | None = None,
              leads: list[tuple[Lead | None, ...]] | None = None,
              ends: list[tuple[SpanEnd | None, ...]] | None = None,
              refs: list[tuple[Reference | None, ...]] | None = None,
              rivals: list[tuple[Reference | None, ...]] | None = None) -> CanvasBatch:
        lengths = [len(c) for c in canvases]
        width = max(lengths)
        x = torch.full((len(canvases), width), pad_id, dtype=torch.long)
        real = torch.zeros((len(canvases), width), dtype=torch.bool)
        for b, ids in enumerate(canvases):
            x[b, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            real[b, : len(ids)] = True
        stops = stops or [()] * len(canvases)
        leads = leads or [()] * len(canvases)
        ends = ends or [()] * len(canvases)
        refs = refs or [()] * len(canvases)
        rivals = rivals or [()] * len(canvases)
        rows = [RowSpans(find_spans(ids, mask_id), 0, g, s, ld, e, refs=r, rivals=v)
                for ids, g, s, ld, e, r, v in zip(canvases, max_grow, stops, leads, ends, refs, rivals)]
        live = torch.ones(len(canvases), dtype=torch.bool, device=device)
        return cls(x.to(device), real.to(device), rows, mask_id, pad_id, lengths, live=live)

    @property
    def masked(self) -> torch.Tensor:
        """(B, L): the masks still to fill; a row that left the batch has none."""
        masked = (self.x == self.mask_id) & self.real
        return masked if self.live is None else masked & self.live[:, None]

    def is_live(self, b: int) -> bool:
        return self.live is None or bool(self.live[b])

    def leave(self, b: int) -> None:
        """Row b leaves the batch (its request was cancelled): its masks stay masks, its unverified drafts
        become masks again, and from now on it is never a candidate, a query or a step of its own."""
        if self.live is None:
            self.live = torch.ones(self.x.shape[0], dtype=torch.bool, device=self.x.device)
        self.live[b] = False
        if self.drafts is not None:
            self.x[b][self.drafts[b]] = self.mask_id
            self.drafts[b] = False

    def extend(self, other: CanvasBatch) -> None:
        """Append `other`'s rows (rows joining a running loop); the narrower side is padded."""
        width = max(self.x.shape[1], other.x.shape[1])

        def widen(t: torch.Tensor, value: object) -> torch.Tensor:
            return torch.nn.functional.pad(t, (0, width - t.shape[1]), value=value)  # type: ignore[arg-type]

        self.x = torch.cat([widen(self.x, self.pad_id), widen(other.x, self.pad_id)])
        self.real = torch.cat([widen(self.real, False), widen(other.real, False)])
        if self.drafts is not None:
            self.drafts = torch.cat([widen(self.drafts, False), widen(torch.zeros_like(other.real), False)])
        self.live = torch.cat([_live(self), _live(other)])
        self.rows += other.rows
        self.lengths += other.lengths

    def keep(self, rows: list[int]) -> None:
        """Keep only `rows` (in that order): rows that are done leave a running loop."""
        picked = torch.tensor(rows, dtype=torch.long, device=self.x.device)
        self.x, self.real = self.x[picked], self.real[picked]
        self.live = _live(self)[picked]
        if self.drafts is not None:
            self.drafts = self.drafts[picked]
        self.rows = [self.rows[b] for b in rows]
        self.lengths = [self.lengths[b] for b in rows]

    def leading_masks(self, block: int) -> torch.Tensor:
        """(B, L): the first `block` masks of every span, left to right (all masks when block is 0); only
        the first one while the span's lead is unfinished."""
        masked = self.masked
        opened = self.lead_open()
        if not block and not bool(opened.any()):
            return masked
        out = torch.zeros_like(masked)
        for b, row in enumerate(self.rows):
            for start, end in row.spans:
                seg = masked[b, start:end]
                width = 1 if bool(opened[b, start:end].any()) else block
                out[b, start:end] = seg & (seg.cumsum(0) <= width) if width else seg
        return out

    def _lead_state(self, b: int, span: int) -> tuple[int, frozenset[int] | None]:
        """(index of the span's first mask or len(span), ids its lead allows there or None)."""
        start, end = self.rows[b].spans[span]
        seg = self.x[b, start:end].tolist()
        first = next((j for j, t in enumerate(seg) if t == self.mask_id), len(seg))
        lead = self.rows[b].lead_of(span)
        if lead is None or first == len(seg) or any(t == self.mask_id for t in seg[:first]):
            return first, None
        return first, lead.allowed(seg[:first])

    def lead_open(self) -> torch.Tensor:
        """(B, L): the first mask of each span whose lead is unfinished."""
        out = torch.zeros_like(self.real)
        for b, row in enumerate(self.rows):
            for i, (start, _) in enumerate(row.spans):
                if row.lead_of(i) is None or not self.is_live(b):
                    continue
                first, allowed = self._lead_state(b, i)
                if allowed is not None:
                    out[b, start + first] = True
        return out

    def constrain(self, candidates: torch.Tensor, logits: torch.Tensor) -> None:
        """Restrict the logits (M, V, in `candidates.nonzero()` order) of each span's first mask to what its
        unfinished lead allows."""
        if not any(row.leads for row in self.rows):
            return
        order = torch.full(self.x.shape, -1, dtype=torch.long, device=self.x.device)
        order[candidates] = torch.arange(int(candidates.sum()), device=self.x.device)
        for b, row in enumerate(self.rows):
            for i, (start, _) in enumerate(row.spans):
                if row.lead_of(i) is None:
                    continue
                first, allowed = self._lead_state(b, i)
                m = int(order[b, start + first]) if allowed is not None else -1
                if m < 0 or allowed is None:
                    continue
                logits[m].masked_fill_(_barred(allowed, logits.shape[-1], logits.device), float("-inf"))

    def refuse_early_ends(self, candidates: torch.Tensor, tokens: torch.Tensor, logits: torch.Tensor,
                          end_ids: frozenset[int]) -> list[int]:
        """The candidates (indices in `candidates.nonzero()` order, as `tokens` and `logits` (M, V)) whose
        proposed token would end its span (an end token, or one of its stops once its lead is written) where
        the span's `SpanEnd.may_end` refuses to end; their end tokens and stops are barred in `logits`, for
        the caller to propose again. A candidate after a mask of its span is left alone: its token is a draft
        that the step writing the mask's token checks again."""
        if not any(row.ends for row in self.rows):
            return []
        ending = end_ids.union(*(stop for row in self.rows for stop in row.stops))
        proposed = tokens.tolist()
        if not ending.intersection(proposed):
            return []
        refused = []
        for m, (b, p) in enumerate(zip(*(t.tolist() for t in candidates.nonzero(as_tuple=True)))):
            if proposed[m] not in ending:
                continue
            row = self.rows[b]
            span = next((i for i, (start, end) in enumerate(row.spans) if start <= p < end), None)
            policy = None if span is None or span in row.finished else row.end_of(span)
            if policy is None:
                continue
            stops = row.stops_of(span)
            if proposed[m] not in end_ids and proposed[m] not in stops:
                continue
            written = self.x[b, row.spans[span][0] : p].tolist()
            lead = row.lead_of(span)
            if self.mask_id in written or (lead is not None and lead.allowed(written) is not None):
                continue
            if not policy.may_end(written):
                logits[m, sorted(end_ids | stops)] = float("-inf")
                refused.append(m)
        return refused

    def lead_length(self, b: int, span: int, seg: list[int]) -> int:
        """How many of `seg`'s first tokens the span's lead covers (stop tokens count only after them)."""
        lead = self.rows[b].lead_of(span)
        if lead is None:
            return 0
        for j in range(len(seg) + 1):
            if lead.allowed(seg[:j]) is None:
                return j
            if j < len(seg) and seg[j] == self.mask_id:
                return j
        return len(seg)

    def around_spans(self, width: int, changed: torch.Tensor) -> torch.Tensor:
        """(B, L): the real positions within `width` of a span that still has masks or where `changed`
        (B, L) holds, on either side. The text next to a finished span stops changing with it."""
        near = torch.zeros_like(self.real)
        if width:
            moving = self.masked | changed
            for b, row in enumerate(self.rows):
                for start, end in row.spans:
                    if bool(moving[b, start:end].any()):
                        near[b, max(0, start - width) : end + width] = True
        return near & self.real

    def span_groups(self) -> torch.Tensor:
        """(B, L): the index of the span each position belongs to, -1 outside spans."""
        groups = torch.full(self.x.shape, -1, dtype=torch.long)
        for b, row in enumerate(self.rows):
            for i, (start, end) in enumerate(row.spans):
                groups[b, start:end] = i
        return groups.to(self.x.device)

    def row_ids(self, b: int) -> list[int]:
        return self.x[b, : self.lengths[b]].tolist()

    def widen(self, width: int) -> None:
        """At least `width` columns: room after the rows for their `pads`."""
        extra = width - self.x.shape[1]
        if extra <= 0:
            return
        self.x = torch.nn.functional.pad(self.x, (0, extra), value=self.pad_id)
        self.real = torch.nn.functional.pad(self.real, (0, extra), value=False)
        if self.drafts is not None:
            self.drafts = torch.nn.functional.pad(self.drafts, (0, extra), value=False)

    def grow(self, b: int, span: int, n: int) -> None:
        """Insert n masks at the end of span `span` of row b (the canvas gets longer); everything after them
        in the row, its pads too, moves with them."""
        row = self.rows[b]
        end = row.spans[span][1]
        row.spans[span][1] += n
        for later in row.spans[span + 1 :]:
            later[0] += n
            later[1] += n
        row.grown += n
        self.lengths[b] += n
        width = max(length + r.pads for length, r in zip(self.lengths, self.rows))
        stop = self.lengths[b] - n + row.pads  # the end of row b's content before the insertion
        keep = min(self.x.shape[1], width)

        def moved(old: torch.Tensor, fill: int | bool, inserted: int | bool) -> torch.Tensor:
            new = torch.full((old.shape[0], width), fill, dtype=old.dtype, device=old.device)
            new[:, :keep] = old[:, :keep]
            new[b, end + n : stop + n] = old[b, end:stop]
            new[b, end : end + n] = inserted
            new[b, stop + n :] = fill
            return new

        self.x = moved(self.x, self.pad_id, self.mask_id)
        if self.drafts is not None:
            self.drafts = moved(self.drafts, False, False)
        self.real = torch.zeros_like(self.x, dtype=torch.bool)
        for i, length in enumerate(self.lengths):
            self.real[i, :length] = True


def _live(batch: CanvasBatch) -> torch.Tensor:
    if batch.live is None:
        return torch.ones(batch.x.shape[0], dtype=torch.bool, device=batch.x.device)
    return batch.live


@functools.lru_cache(maxsize=64)
def _barred(allowed: frozenset[int], vocab: int, device: torch.device) -> torch.Tensor:
    """(V,) True for the ids a lead does not allow. A lead returns the same set object while its rest is the
    same (`infill.leads` caches them), and a set can hold most of the vocabulary: building the mask once
    instead of every step took 7 ms a step off a paused completion's first steps."""
    keep = torch.zeros(vocab, dtype=torch.bool, device=device)
    keep[[t for t in allowed if t < vocab]] = True
    return ~keep
