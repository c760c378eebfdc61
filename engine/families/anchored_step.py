"""Predictions of the anchored family inside the denoising loop (see models/anchored.py for the attention).

Every K/V this family caches is exact: fixed text never sees a gap, a committed gap token sees only what
was fixed before it was committed (commits are a leading run; a gap position's keys are dropped once a
position before it in its gap changes, as when a draft is replaced), and masks are recomputed whenever
they are read. So a step runs as queries only
- positions whose cached K/V are missing or out of date: all fixed text on the first step (the prefill),
  and each token committed last step, in spans that are still open;
- the rows whose logits are read: the row before each candidate mask (logits are shifted), i.e. the last
  committed token of each open span and the candidate masks but the last; a text row's logits, once read,
  are kept with its K/V (`AnchoredKV.text_logits`, and across requests in `DocKV`), so a cached text row
  never runs again for them.
Masks past the lookahead window are never computed (no row reads them). `cache="none"` runs every position
of the canvas every step instead: the same tokens, slower (tests' oracle, bench.speed's naive baseline).

Across requests (`DocKV`), the text before the first gap keeps the K/V of its longest common token prefix
with the last canvas of the document, and each later fixed segment that of its common prefix with the
segment in the same place last time, re-rotated to its new position (its K/V depend on its own tokens only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import torch

from engine.cache.anchored_kv import AnchoredKV
from engine.cache.doc_cache import DocKV
from engine.denoise.canvas_batch import CanvasBatch, query_positions
from engine.models import copies_apart, segment_attention
from engine.models.anchored import (
    AnchoredContext,
    AnchoredModel,
    GapAdapt,
    RightView,
    attention,
    layout,
    right_view,
)
from engine.models.layers import rotated_by
from engine.models.segment_attention import WIDE
from engine.params import DenoiseParams

if TYPE_CHECKING:
    from engine.denoise.seam import LoadedModel


class AnchoredPredictor:
    def __init__(self, loaded: LoadedModel, batch: CanvasBatch, params: DenoiseParams) -> None:
        self.device = loaded.device
        self.model: AnchoredModel = loaded.model  # type: ignore[assignment]
        self.params = params
        self.room = self.model.adapter.shape.gap_room
        n, width = batch.x.shape
        shape = self.model.shape
        self._views: dict[object, tuple[torch.Tensor, torch.Tensor, RightView]] = {}  # right_view of the whole batch per layout
        extra = self._layout(batch)[2].index.shape[1]  # the copy slots the first step needs, made with the rest
        self.kv = AnchoredKV(shape.num_hidden_layers, n, width, shape.num_key_value_heads, self.model.head_dim,
                             loaded.kv_dtype or loaded.dtype, loaded.device, extra)

    def add_rows(self, n: int) -> None:
        """n rows joined the batch: nothing of theirs is cached, so their first step prefills them."""
        self.kv.add_rows(n)

    def keep_rows(self, rows: list[int]) -> None:
        self.kv.keep_rows(torch.tensor(rows, dtype=torch.long, device=self.kv.ids.device))

    def _layout(self, batch: CanvasBatch) -> tuple[torch.Tensor, torch.Tensor, RightView, object]:
        """(positions, segments) (B, L), segments -1 on padding, and the batch's `RightView`, with the key of
        that layout: computed once per layout (it changes only when a span grows or rows join or leave)."""
        key = tuple((length, tuple(map(tuple, row.spans))) for length, row in zip(batch.lengths, batch.rows))
        if key not in self._views:
            n, width = batch.x.shape
            positions = torch.zeros((n, width), dtype=torch.long)
            segments = torch.full((n, width), -1, dtype=torch.long)
            for b, row in enumerate(batch.rows):
                length = batch.lengths[b]
                positions[b, :length], segments[b, :length] = layout(length, row.spans, self.room)
            positions, segments = positions.to(batch.x.device), segments.to(batch.x.device)
            self._views.clear()
            # with the adapter off, committed rows see no right context (`GapAdapt` closes their pairs) and
            # no candidate's logits come from a mask row: the copies would be built and read for nothing
            right = self.model.adapter.shape.max_right if self.params.adapter else 0
            self._views[key] = (positions, segments, right_view(segments, positions, self.room, right))
        positions, segments, view = self._views[key]
        return positions, segments, view, key

    def warm(self, old: DocKV, batch: CanvasBatch, b: int) -> None:
        """Reuse `old` (the last canvas of this document) for row b, segment by segment."""
        if old.spans is None:
            return
        self.kv.fit(batch.x.shape[1], self.kv.extra)  # a row that joined may be wider than the batch was
        new_ids = batch.row_ids(b)
        new_segments = _fixed_segments(new_ids, batch.rows[b].spans)
        old_segments = _fixed_segments(old.ids, old.spans)
        pairs = [(0, 0)]
        if len(new_segments) == len(old_segments):
            pairs += [(i, i) for i in range(1, len(new_segments))]
        elif len(new_segments) > 1 and len(old_segments) > 1:
            pairs.append((len(new_segments) - 1, len(old_segments) - 1))
        new_pos, _ = layout(len(new_ids), batch.rows[b].spans, self.room)
        old_pos, _ = layout(len(old.ids), old.spans, self.room)
        for i, j in pairs:
            (ns, ne), (os_, oe) = new_segments[i], old_segments[j]
            same = 0
            while same < min(ne - ns, oe - os_) and new_ids[ns + same] == old.ids[os_ + same]:
                same += 1
            if not same:
                continue
            delta = int(new_pos[ns] - old_pos[os_])
            for own, cached in zip(self.kv.layers, old.layers):
                assert own is not None
                k = cached.k[:, :, os_ : os_ + same]
                if delta:
                    k = rotated_by(k, torch.full((1, same), delta, device=k.device), self.model.rotary_dim,
                                   self.model.shape.rope_theta)
                own.k[b, :, ns : ns + same] = k[0]
                own.v[b, :, ns : ns + same] = cached.v[0, :, os_ : os_ + same]
            self.kv.ids[b, ns : ns + same] = torch.tensor(new_ids[ns : ns + same], device=self.kv.ids.device)
            if i == 0:  # the text before the first gap stays in place: its rows' logits hold where its K/V do
                self.kv.text_logits[b].update({p: t for p, t in old.text_logits.items() if p < same})

    def grew(self, batch: CanvasBatch, b: int, span: int, n: int) -> None:
        """n masks were inserted at the end of span `span` of row b: move the cached slots after them, and
        when the span outgrew its room (the text after it moved), drop everything after the first gap."""
        self.kv.fit(batch.x.shape[1], self.kv.extra)
        start, end = batch.rows[b].spans[span]
        self.kv.shift(b, end - n, n)
        if end - start > self.room:
            self.kv.ids[b, batch.rows[b].spans[0][0] :] = -1

    def predict(self, batch: CanvasBatch, candidates: torch.Tensor,
                changed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (M, V) for the candidate positions in `candidates.nonzero()` order, positions run per row)."""
        positions, segments, view, key = self._layout(batch)
        self.kv.fit(batch.x.shape[1], view.index.shape[1])
        masked = batch.masked
        gap = (segments % 2 == 1) & (segments >= 0)
        rows_m, pos_m = candidates.nonzero(as_tuple=True)
        held: torch.Tensor | None = None
        known = torch.zeros_like(rows_m, dtype=torch.bool)
        if self.params.cache == "none":
            need = batch.real & batch.masked.any(-1, keepdim=True)  # every position of every open row
        else:
            self._drop_stale_gap_keys(batch.x, gap, segments)
            open_gap = gap & self._open_spans(batch)
            need = batch.real & ~masked & (self.kv.ids != batch.x) & (~gap | open_gap)
            cached = ~need & (self.kv.ids == batch.x)
            known = self._known_logits(rows_m, pos_m - 1, cached)
            need[rows_m[~known], pos_m[~known] - 1] = True
            held = need & cached
        if batch.live is not None:
            need &= batch.live[:, None]  # a row that left the batch is not computed
        kept = self._hold(held, view)
        out: torch.Tensor | None = None
        for group in by_width(need):
            pick = torch.isin(rows_m, group) & ~known
            logits = self._forward(batch, group, need, rows_m[pick], pos_m[pick], positions, segments, gap, view,
                                   key)
            if out is None and bool(pick.all()):  # the usual step: one group, every candidate (no 3 MB copy at 16 rows)
                out = logits
            else:
                if out is None:
                    out = logits.new_empty((rows_m.numel(), logits.shape[-1]))
                out[pick] = logits
            self.kv.copies_of = key
        kept()
        out = self._text_logits(out, rows_m, pos_m - 1, known, segments)
        return out, need.sum(-1).cpu()

    def _known_logits(self, rows: torch.Tensor, before: torch.Tensor, cached: torch.Tensor) -> torch.Tensor:
        """(M,): the candidates whose logits a cached text row already gave (`AnchoredKV.text_logits`)."""
        known = torch.zeros(rows.shape, dtype=torch.bool)
        if not any(self.kv.text_logits):
            return known
        for i, (b, p) in enumerate(zip(rows.tolist(), before.tolist())):
            known[i] = p in self.kv.text_logits[b] and bool(cached[b, p])
        return known.to(rows.device)

    def _text_logits(self, out: torch.Tensor | None, rows: torch.Tensor, before: torch.Tensor, known: torch.Tensor,
                     segments: torch.Tensor) -> torch.Tensor:
        """`out` with the `known` candidates' logits read from the cache, and the logits of every text row
        this step ran for a candidate kept there."""
        if bool(known.any()):
            saved = torch.stack([self.kv.text_logits[b][p] for b, p in zip(rows[known].tolist(), before[known].tolist())])
            if out is None:
                out = saved.new_empty((rows.numel(), saved.shape[-1]))
            out[known] = saved
        assert out is not None
        text = (segments[rows, before] % 2 == 0) & ~known
        if bool(text.any()):
            for i in text.nonzero().flatten().tolist():
                self.kv.text_logits[int(rows[i])][int(before[i])] = out[i].clone()
        return out

    def _hold(self, held: torch.Tensor | None, view: RightView) -> Callable[[], None]:
        """Keep the cached K/V of the positions `held` (rows run again only for their logits: the row
        before a gap in a request's first step, the last verified token) through a forward, restored by the
        returned call. A row's K/V are then those of the forward that first computed them: a row run alone
        and beside other rows (or in a prefill) rounds apart, and a recomputed row before the gap gave the
        gap rows other keys in a step of four rows than in a step of one (bench.speed --block 4 parted from
        one-token-per-step decoding at a near-tie). Positions the right-context copies read are not held."""
        if held is None or not bool(held.any()):
            return lambda: None
        rows, cols = (held & ~_copied(view, held.shape)).nonzero(as_tuple=True)
        saved = [(layer.k[rows, :, cols].clone(), layer.v[rows, :, cols].clone()) for layer in self.kv.layers]

        def restore() -> None:
            for layer, (k, v) in zip(self.kv.layers, saved):
                layer.k[rows, :, cols], layer.v[rows, :, cols] = k, v
        return restore

    def _forward(self, batch: CanvasBatch, group: torch.Tensor, need: torch.Tensor, rows_m: torch.Tensor,
                 pos_m: torch.Tensor, positions: torch.Tensor, segments: torch.Tensor, gap: torch.Tensor,
                 view: RightView, key: object) -> torch.Tensor:
        """One forward over the rows in `group`: their `need` positions as queries; logits for the
        candidates (rows_m, pos_m) of those rows."""
        masked = batch.masked
        local = torch.full((batch.x.shape[0],), -1, dtype=torch.long, device=batch.x.device)
        local[group] = torch.arange(group.numel(), device=group.device)
        x = batch.x[group]
        query = query_positions(need[group])
        committed = gap[group] & ~masked[group]
        if group.numel() != batch.x.shape[0]:
            view = RightView(view.index[group], view.shift[group], view.gap[group], view.slot)
        copies_stale = self.kv.copies_of != key or bool(torch.isin(query, view.index).any())
        allowed, right = attention(segments[group], query, committed, view)
        segments_plan = segment_attention.plan(segments[group], query) if query.shape[1] > WIDE else None
        copies = copies_apart.plan(allowed, view.slot, segments.shape[1]) if segments_plan is None else None
        adapt = GapAdapt(self.model.adapter, gap[group].gather(1, query), allowed, right, self.params.adapter,
                         segments_plan, copies)
        ctx = AnchoredContext(self.kv.select(group), view, self.model.shape.rope_theta, query_index=query,
                              adapt=adapt, canvas_width=self.kv.width, copies_stale=copies_stale)
        slot = torch.full_like(x, -1)
        slot.scatter_(1, query, torch.arange(query.shape[1], device=query.device).expand_as(query))
        r = local[rows_m]
        logits: torch.Tensor = self.model(x.gather(1, query), positions[group].gather(1, query), None, ctx,
                            logits_at=(r, slot[r, pos_m - 1]))
        self.kv.update(group, ctx.layers, query, x)
        return logits

    def _drop_stale_gap_keys(self, x: torch.Tensor, gap: torch.Tensor, segments: torch.Tensor) -> None:
        """Forget the cached K/V of every gap position after one whose id changed, in the same gap: a gap row
        attends to its gap's rows before it, so its keys are out of date once one of those holds another
        token, even where its own id is the one it was computed from. Verified drafting makes that case: a
        wrong draft is replaced and the drafts after it masked, and the next step may write one of those
        back with the same token it held as a draft (measured on the 4-bit kernel: a stale key there moved
        a later token's logits by 0.8 and wrote another token than one-token-per-step decoding)."""
        differs = gap & (self.kv.ids != x)
        count = differs.cumsum(-1)
        starts = segments != torch.nn.functional.pad(segments, (1, 0), value=-2)[:, :-1]
        before = torch.where(starts, count - differs.long(), 0).cummax(-1).values  # count before each segment
        self.kv.ids.masked_fill_(gap & (count > before), -1)

    def _open_spans(self, batch: CanvasBatch) -> torch.Tensor:
        """(B, L): positions of spans that still hold a mask."""
        out = torch.zeros_like(batch.real)
        masked = batch.masked
        for b, row in enumerate(batch.rows):
            for start, end in row.spans:
                if bool(masked[b, start:end].any()):
                    out[b, start:end] = True
        return out

    def keep(self, batch: CanvasBatch, b: int) -> DocKV | None:
        length = batch.lengths[b]
        return DocKV(self.kv.ids[b, :length].tolist(), self.kv.trimmed(b, length),
                     [(s[0], s[1]) for s in batch.rows[b].spans],
                     text_logits={p: t for p, t in self.kv.text_logits[b].items() if p < length})


def _copied(view: RightView, shape: torch.Size) -> torch.Tensor:
    """(B, L): the canvas positions whose keys the right-context copies of `view` read."""
    out = torch.zeros(shape, dtype=torch.bool, device=view.index.device)
    rows = torch.arange(shape[0], device=out.device)[:, None].expand_as(view.index)
    real = view.index >= 0
    out[rows[real], view.index[real]] = True
    return out


SPLIT = 64  # rows needing more positions than this (a prefill) run apart from rows needing a few


def by_width(need: torch.Tensor) -> list[torch.Tensor]:
    """The rows that need any position, as one group, or two when some need more than SPLIT positions
    and others fewer: a forward runs every row of its group at the widest row's width, so a row joining
    a running batch (its prefill) must not make the rows decoding a few tokens a step pay for it."""
    counts = need.sum(-1)
    wide = (counts > SPLIT).nonzero().flatten()
    narrow = ((counts > 0) & (counts <= SPLIT)).nonzero().flatten()
    if wide.numel() and narrow.numel():
        return [wide, narrow]
    rows = (counts > 0).nonzero().flatten()
    return [rows] if rows.numel() else []  # none: every logit a step reads is known


def _fixed_segments(ids: list[int], spans: Iterable[Sequence[int]]) -> list[tuple[int, int]]:
    """[start, end) of each fixed segment: before the first span, between spans, after the last."""
    bounds = [0] + [p for span in spans for p in span] + [len(ids)]
    return [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
