"""The one denoising loop. Policies (what to commit, what to cache) plug in through `DenoiseParams`.

Each step: predict every masked position (a full forward, or only the mask spans against cached K/V of
the fixed text), propose a token and a confidence per position, let the commit rule pick positions,
write them, then grow spans that filled without an end token. Fixed text is never written.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from engine.anchored_step import AnchoredPredictor
from engine.canvas_state import CanvasBatch
from engine.full_attention import FullAttentionPredictor
from engine.loop_rows import LoopRows, RowFeed
from engine.loader import LoadedModel
from engine.models.layers import fused_kernels_only
from engine.params import DenoiseParams
from engine.policies import (
    dream_count,
    end_run,
    llada_count,
    propose,
    select_leading_run,
    select_threshold,
    speculate,
    select_top_k,
    threshold_confidence,
)
from engine.prefix_cache import DocKV
from engine.requests import InfillRequest, InfillResult, Span, Stats

__all__ = ["Denoiser", "InfillRequest", "InfillResult", "Span", "Stats"]


class Denoiser:
    def __init__(self, loaded: LoadedModel) -> None:
        self.m = loaded
        self.left_to_right = loaded.family.left_to_right

    def run(
        self,
        requests: list[InfillRequest],
        params: DenoiseParams,
        cancel: Callable[[], bool] | None = None,
        warm: DocKV | None = None,
        feed: RowFeed | None = None,
    ) -> tuple[list[InfillResult], DocKV | None]:
        """Denoise every row. With a `feed` (`engine.loop_rows`), requests join between steps and each row
        is handed to `feed.done` and leaves the batch as soon as it is done."""
        with torch.inference_mode(), fused_kernels_only(self.m.device):
            return self._run(requests, params, cancel, warm, feed)

    def _build(self, requests: list[InfillRequest]) -> CanvasBatch:
        sp = self.m.special
        return CanvasBatch.build([list(r.canvas) for r in requests], [r.max_grow for r in requests],
                                 sp.mask_id, sp.pad_id, self.m.device, [r.span_stops for r in requests],
                                 [r.span_leads for r in requests], [r.span_ends for r in requests])

    def _run(
        self,
        requests: list[InfillRequest],
        params: DenoiseParams,
        cancel: Callable[[], bool] | None,
        warm: DocKV | None,
        feed: RowFeed | None,
    ) -> tuple[list[InfillResult], DocKV | None]:
        sp = self.m.special
        batch = self._build(requests)
        rows = LoopRows.start(requests, batch.masked, params.steps, 0)
        started = time.perf_counter()
        gen = torch.Generator(device=self.m.device).manual_seed(params.seed)
        llada_reference = params.rule == "reference" and self.m.family.name == "llada"
        precision = torch.float64 if llada_reference else torch.float32
        predictor = (AnchoredPredictor if self.left_to_right else FullAttentionPredictor)(self.m, batch, params)
        if params.cache == "fixed" and warm is not None and len(requests) == 1:
            predictor.warm(warm, batch)
        block = params.block or self.m.family.lookahead
        if self.left_to_right and (params.rule == "reference" or not params.adapter):
            block = 1  # one token a step: no mask row is read
        speculative = self.left_to_right and params.verify and params.temperature == 0
        if speculative:
            batch.drafts = torch.zeros_like(batch.masked)
        changed = torch.zeros_like(batch.masked)
        cancelled = False
        taken = len(requests)
        done: dict[int, InfillResult] = {}

        while bool(batch.masked.any()):
            if feed is not None and (joining := feed.admit()):
                changed = self._join(batch, predictor, rows, joining, params, taken, changed)
                taken += len(joining)
            if cancel is not None and cancel():
                cancelled = True
                break
            if self._leave_cancelled(batch, rows):
                changed = self._hand_over(batch, predictor, rows, started, done, feed, changed)
                if not bool(batch.masked.any()):
                    break
            active = batch.masked.any(-1).cpu()
            candidates = batch.leading_masks(block)  # the masks this step may commit
            targets = candidates | batch.drafts if speculative else candidates  # and the drafts to verify
            logits_m = predictor.predict(batch, targets, changed)
            if feed is not None:
                feed.stepped(int(active.sum()))
            if sp.mask_id < logits_m.shape[-1]:
                logits_m[:, sp.mask_id] = float("-inf")  # a committed mask would stay masked forever
            if params.eos_penalty:
                logits_m[:, sorted(sp.end_ids)] -= params.eos_penalty
            batch.constrain(targets, logits_m)
            for b, stat in enumerate(rows.stats):
                stat.forward_passes += int(active[b])
            tokens, score = propose(logits_m, params.alg, params.temperature, params.top_p, gen, precision)
            where = targets.nonzero(as_tuple=True)
            if speculative:
                new_x = self._speculate(batch, targets, tokens, score, params, block - 1)
            else:
                commit = self._select(batch, candidates, score, params, rows.initial, rows.row_step, rows.row_steps)
                new_x = batch.x.clone()
                new_x[where] = torch.where(commit[where], tokens, batch.x[where])
            if params.rule == "threshold" and params.fill_after_eos or self.left_to_right:
                proposed = torch.full_like(batch.x, sp.mask_id)
                if not speculative:
                    proposed[where] = tokens
                self._fill_after_eos(batch, new_x, proposed)
            if self.left_to_right:
                self._end_spans(batch, new_x)
            spans_before = [self._open_spans(batch, b) for b in range(len(batch.rows))]
            changed = new_x != batch.x
            batch.x = new_x
            rows.row_step += active.to(rows.row_step.device).long()
            for b, span, extra in self._grow(batch, spans_before, params, rows.initial, rows.row_step, rows.row_steps):
                predictor.grew(batch, b, span, extra)
            changed = torch.nn.functional.pad(changed, (0, batch.x.shape[1] - changed.shape[1]))
            changed = self._hand_over(batch, predictor, rows, started, done, feed, changed)

        if batch.drafts is not None:  # a cancelled run leaves unverified drafts: they were never written
            batch.x[batch.drafts] = sp.mask_id
        seconds = time.perf_counter() - started
        for b, i in enumerate(rows.index):
            rows.stats[b].positions = int(predictor.positions[b])
            done[i] = self._result(batch, b, rows.stats[b], seconds, cancelled or rows.left[b])
            if feed is not None:
                feed.done(i, done[i])
        keep = None
        if (params.cache == "fixed" and taken == 1 and rows.index == [0] and requests[0].doc_id is not None
                and not cancelled and not rows.left[0]):
            keep = predictor.keep(batch)
        return [done[i] for i in range(len(requests))], keep

    def _join(self, batch: CanvasBatch, predictor, rows: LoopRows, joining: list[InfillRequest],
              params: DenoiseParams, taken: int, changed: torch.Tensor) -> torch.Tensor:
        """Rows for `joining` enter the running batch; returns `changed` for the wider batch."""
        new = self._build(joining)
        batch.extend(new)
        predictor.add_rows(len(joining))
        rows.extend(LoopRows.start(joining, new.masked, params.steps, taken))
        changed = torch.nn.functional.pad(changed, (0, batch.x.shape[1] - changed.shape[1]))
        return torch.cat([changed, changed.new_zeros((len(joining), changed.shape[1]))])

    def _hand_over(self, batch: CanvasBatch, predictor, rows: LoopRows, started: float,
                   done: dict[int, InfillResult], feed: RowFeed | None, changed: torch.Tensor) -> torch.Tensor:
        """With a feed: each row that is done (no mask to fill nor draft to verify, or it left) goes to
        `feed.done` and out of the batch, unless it is the last row (the loop's result at its end)."""
        if feed is None:
            return changed
        busy = batch.masked.any(-1)
        if batch.drafts is not None:
            busy |= batch.drafts.any(-1)
        finished = (~busy).nonzero().flatten().tolist()
        staying = busy.nonzero().flatten().tolist()
        if not finished or not staying:
            return changed
        for b in finished:
            rows.stats[b].positions = int(predictor.positions[b])
            i = rows.index[b]
            done[i] = self._result(batch, b, rows.stats[b], time.perf_counter() - started, rows.left[b])
            feed.done(i, done[i])
        batch.keep(staying)
        predictor.keep_rows(staying)
        rows.keep(staying)
        return changed[torch.tensor(staying, dtype=torch.long, device=changed.device)]

    @staticmethod
    def _leave_cancelled(batch: CanvasBatch, rows: LoopRows) -> bool:
        """Rows whose request's `cancel` now returns True leave the batch; whether any left."""
        open_rows = batch.masked.any(-1).tolist()
        any_left = False
        for b, request in enumerate(rows.requests):
            if request.cancel is not None and open_rows[b] and request.cancel():
                batch.leave(b)
                rows.left[b] = any_left = True
        return any_left

    # -- commit rules ---------------------------------------------------------------------------

    def _select(self, batch, masked, score, params, initial, row_step, row_steps) -> torch.Tensor:
        full_score = torch.full(batch.x.shape, float("-inf"), device=batch.x.device, dtype=score.dtype)
        full_score[masked] = score
        if self.left_to_right:
            conf = torch.full_like(full_score, -1.0)
            conf[masked] = threshold_confidence(score.float(), params.alg)
            threshold = params.threshold if params.rule == "threshold" and params.adapter else float("inf")
            return select_leading_run(conf, masked, threshold, batch.span_groups(), batch.lead_open())
        if params.rule == "threshold":
            conf = torch.full_like(full_score, -1.0)
            conf[masked] = threshold_confidence(score.float(), params.alg)
            return select_threshold(full_score, conf, params.threshold, batch.span_groups())
        if self.m.family.name == "llada":
            k = llada_count(initial, row_step, row_steps)
        else:
            k = dream_count(masked.sum(-1), row_step, row_steps, params.eps)
        return select_top_k(full_score, k)

    def _speculate(self, batch: CanvasBatch, targets: torch.Tensor, tokens: torch.Tensor, score: torch.Tensor,
                   params: DenoiseParams, most: int) -> torch.Tensor:
        """Verified drafting (`policies.speculate`) for every row; updates `batch.drafts`."""
        assert batch.drafts is not None
        threshold = params.threshold if params.rule == "threshold" and params.adapter else float("inf")
        conf = threshold_confidence(score.float(), params.alg).tolist()
        rows, cols = (t.tolist() for t in targets.nonzero(as_tuple=True))
        proposed = tokens.tolist()
        single = batch.lead_open()
        new_x = batch.x.clone()
        drafts = torch.zeros_like(batch.drafts)
        end_ids = self.m.special.end_ids
        for b, row in enumerate(batch.rows):
            picked = [j for j, r in enumerate(rows) if r == b]
            if not picked:
                continue
            positions = [cols[j] for j in picked]
            out, kept = speculate(
                batch.x[b].tolist(), row.spans, positions, set(batch.drafts[b].nonzero().flatten().tolist()),
                {cols[j]: proposed[j] for j in picked}, {cols[j]: conf[j] for j in picked}, threshold,
                batch.mask_id, [end_ids | row.stops_of(i) for i in range(len(row.spans))],
                set(single[b].nonzero().flatten().tolist()), most=most)
            new_x[b] = torch.tensor(out, dtype=new_x.dtype, device=new_x.device)
            if kept:
                drafts[b, sorted(kept)] = True
        batch.drafts = drafts
        return new_x

    def _fill_after_eos(self, batch: CanvasBatch, new_x: torch.Tensor, proposed: torch.Tensor) -> None:
        end_ids = self.m.special.end_ids
        for b, row in enumerate(batch.rows):
            if not batch.is_live(b):
                continue
            for i, (start, end) in enumerate(row.spans):
                seg, old, prop = (t[b, start:end].tolist() for t in (new_x, batch.x, proposed))
                filled = end_run(seg, old, prop, end_ids, end_ids | row.stops_of(i), self.m.special.eos_id,
                                 batch.mask_id, batch.lead_length(b, i, seg))
                if filled != seg:
                    new_x[b, start:end] = torch.tensor(filled, dtype=new_x.dtype, device=new_x.device)

    def _end_spans(self, batch: CanvasBatch, new_x: torch.Tensor) -> None:
        """Close each span whose written text its SpanEnd calls complete: its masks and unverified drafts
        become end tokens."""
        end_ids = self.m.special.end_ids
        for b, row in enumerate(batch.rows):
            for i, (start, end) in enumerate(row.spans):
                policy = row.end_of(i)
                if policy is None or i in row.finished or not batch.is_live(b):
                    continue
                seg = new_x[b, start:end].tolist()
                drafted = [False] * len(seg) if batch.drafts is None else batch.drafts[b, start:end].tolist()
                written = next((j for j, t in enumerate(seg) if t == batch.mask_id or drafted[j]), len(seg))
                if any(t in end_ids for t in seg[:written]) or not policy.reached(seg[:written]):
                    continue
                row.finished.add(i)
                if written < len(seg):
                    new_x[b, start + written : end] = self.m.special.eos_id
                    if batch.drafts is not None:
                        batch.drafts[b, start + written : end] = False

    # -- spans ----------------------------------------------------------------------------------

    def _open_spans(self, batch: CanvasBatch, b: int) -> list[bool]:
        return [bool((batch.x[b, s:e] == batch.mask_id).any()) for s, e in batch.rows[b].spans]

    def _grow(self, batch, spans_before, params, initial, row_step, row_steps) -> list[tuple[int, int, int]]:
        """Grow spans that filled with no end token; (row, span, masks added) for each."""
        grown = []
        for b, row in enumerate(batch.rows):
            if not batch.is_live(b):
                continue
            for i in range(len(row.spans) - 1, -1, -1):
                start, end = row.spans[i]
                ends = self.m.special.end_ids | row.stops_of(i)
                if not spans_before[b][i] or i in row.finished:
                    continue
                if bool((batch.x[b, start:end] == batch.mask_id).any()):
                    continue
                budget = row.max_grow - row.grown
                seg = batch.x[b, start:end].tolist()
                lead = batch.lead_length(b, i, seg)
                if budget <= 0 or any(t in self.m.special.end_ids for t in seg) or any(t in ends for t in seg[lead:]):
                    continue
                extra = min(budget, max(8, (end - start) // 2))
                batch.grow(b, i, extra)
                grown.append((b, i, extra))
                initial[b] = int(batch.masked[b].sum())
                row_step[b] = 0
                row_steps[b] = extra if params.steps is None else max(1, params.steps * extra // max(end - start, 1))
        return grown

    def _result(self, batch: CanvasBatch, b: int, stats: Stats, seconds: float, cancelled: bool) -> InfillResult:
        ids = batch.row_ids(b)
        ends = self.m.special.end_ids
        spans = [Span(s, e, ids[s:e]) for s, e in batch.rows[b].spans]
        stats.new_tokens = sum(1 for sp in spans for t in sp.token_ids if t not in ends and t != batch.mask_id)
        stats.seconds = seconds
        return InfillResult(ids, spans, stats, cancelled)
