"""The one denoising loop. A family plugs in what a step computes and what it commits
(`engine.denoise.seam`); everything else here is the same for every family.

Each step: ask the commit policy which positions to propose for, predict them (`Predictor`: a full forward,
or only some positions against cached K/V), propose a token and a confidence per position, let the commit
policy write some of them, then grow spans that filled without an end token. Fixed text is never written.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from engine.cache.doc_cache import DocKV
from engine.denoise.canvas_batch import CanvasBatch
from engine.denoise.margins import record_margins
from engine.denoise.policies import propose
from engine.denoise.rows import LoopRows
from engine.denoise.seam import LoadedModel
from engine.denoise.state import LoopState, RowFeed
from engine.models.layers import fused_kernels_only
from engine.params import DenoiseParams
from engine.types import InfillRequest, InfillResult


class Denoiser:
    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
        self.special = loaded.special

    def run(
        self,
        requests: list[InfillRequest],
        params: DenoiseParams,
        cancel: Callable[[], bool] | None = None,
        warm: DocKV | None = None,
        feed: RowFeed | None = None,
    ) -> tuple[list[InfillResult], DocKV | None]:
        """Denoise every row. With a `feed` (`engine.denoise.state`), requests join between steps and each row
        is handed to `feed.done` and leaves the batch as soon as it is done."""
        with torch.inference_mode(), fused_kernels_only(self.loaded.device):
            state = self._start(requests, params, warm)
            gen = torch.Generator(device=self.loaded.device).manual_seed(params.seed)
            while state.open():
                if feed is not None and (joining := feed.admit()):
                    state.join(self._build(joining), joining, params.steps)
                if cancel is not None and cancel():
                    state.cancelled = True
                    break
                if state.leave_cancelled():
                    if feed is not None:
                        state.hand_over(feed)
                    if not state.open():
                        break
                self.step(state, params, gen, feed)
                if feed is not None:
                    state.hand_over(feed)
            return self._finish(state, requests, params, feed)

    def prefill(self, request: InfillRequest, params: DenoiseParams, warm: DocKV | None = None) -> DocKV | None:
        """Run only the first step's forward over `request` (what the fixed text needs: all of it, or what
        `warm` lacks) and return what the document keeps, writing nothing."""
        with torch.inference_mode(), fused_kernels_only(self.loaded.device):
            state = self._start([request], params, warm)
            _, targets = state.commit.targets(state.batch)
            state.predictor.predict(state.batch, targets, state.changed)
            return state.predictor.keep(state.batch)

    def _build(self, requests: list[InfillRequest]) -> CanvasBatch:
        sp = self.special
        return CanvasBatch.build([list(r.canvas) for r in requests], [r.max_grow for r in requests],
                                 sp.mask_id, sp.pad_id, self.loaded.device, [r.span_stops for r in requests],
                                 [r.span_leads for r in requests], [r.span_ends for r in requests],
                                 [r.span_refs for r in requests], [r.span_rivals for r in requests])

    def _start(self, requests: list[InfillRequest], params: DenoiseParams, warm: DocKV | None) -> LoopState:
        family = self.loaded.family
        batch = self._build(requests)
        predictor = family.predictor(self.loaded, batch, params)
        if params.cache == "fixed" and warm is not None and len(requests) == 1:
            predictor.warm(warm, batch)
        commit = family.commit(self.loaded, params, self.special)
        commit.begin(batch)
        rows = LoopRows.start(requests, batch.masked, params.steps, 0)
        return LoopState(batch, rows, predictor, commit, self.special.end_ids, torch.zeros_like(batch.masked),
                         taken=len(requests))

    def step(self, state: LoopState, params: DenoiseParams, gen: torch.Generator, feed: RowFeed | None) -> None:
        """One denoising step over every live row with masks."""
        batch, rows = state.batch, state.rows
        started = time.perf_counter()
        active = batch.masked.any(-1).cpu()
        candidates, targets = state.commit.targets(batch)
        logits, ran = state.predictor.predict(batch, targets, state.changed)
        if feed is not None:
            feed.stepped(int(active.sum()))
        if self.special.mask_id < logits.shape[-1]:
            logits[:, self.special.mask_id] = float("-inf")  # a committed mask would stay masked forever
        if params.eos_penalty:
            logits[:, sorted(self.special.end_ids)] -= params.eos_penalty
        batch.constrain(targets, logits)
        tokens, score = propose(logits, params.alg, params.temperature, params.top_p, gen, state.commit.precision)
        refused = batch.refuse_early_ends(targets, tokens, logits, self.special.end_ids)
        if refused:
            again = torch.tensor(refused, device=tokens.device)
            tokens[again], score[again] = propose(logits[again], params.alg, params.temperature, params.top_p, gen,
                                                  state.commit.precision)
        new_x = state.commit.commit(batch, candidates, targets, tokens, score, rows)
        was_open = open_spans(batch)
        state.changed = new_x != batch.x
        batch.x = new_x
        record_margins(batch, targets, logits, self.special.end_ids)
        rows.row_step += active.to(rows.row_step.device).long()
        for b, span, extra in grow_spans(batch, was_open, params, rows, self.special.end_ids):
            state.predictor.grew(batch, b, span, extra)
        state.widen_changed()
        rows.counted(active, ran, time.perf_counter() - started)

    def _finish(self, state: LoopState, requests: list[InfillRequest], params: DenoiseParams,
                feed: RowFeed | None) -> tuple[list[InfillResult], DocKV | None]:
        batch, rows = state.batch, state.rows
        if batch.drafts is not None:  # a cancelled run leaves unverified drafts: they were never written
            batch.x[batch.drafts] = self.special.mask_id
        for b, i in enumerate(rows.index):
            state.done[i] = state.result(b, state.cancelled or rows.left[b])
            if feed is not None:
                feed.done(i, state.done[i])
        keep = None
        if (params.cache == "fixed" and state.taken == 1 and rows.index == [0] and requests[0].doc_id is not None
                and not state.cancelled and not rows.left[0]):
            keep = state.predictor.keep(batch)
        return [state.done[i] for i in range(len(requests))], keep


def open_spans(batch: CanvasBatch) -> list[list[bool]]:
    """Per row, per span: whether it still holds a mask."""
    masked = batch.x == batch.mask_id
    return [[bool(masked[b, s:e].any()) for s, e in row.spans] for b, row in enumerate(batch.rows)]


def grow_spans(batch: CanvasBatch, was_open: list[list[bool]], params: DenoiseParams, rows: LoopRows,
               end_ids: frozenset[int]) -> list[tuple[int, int, int]]:
    """Grow the spans that filled this step with no end token; (row, span, masks added) for each. A grown
    span restarts its row's schedule over the new masks."""
    grown = []
    for b, row in enumerate(batch.rows):
        if not batch.is_live(b):
            continue
        for i in range(len(row.spans) - 1, -1, -1):
            start, end = row.spans[i]
            if not was_open[b][i] or i in row.finished:
                continue
            if bool((batch.x[b, start:end] == batch.mask_id).any()):
                continue
            budget = row.max_grow - row.grown
            seg = batch.x[b, start:end].tolist()
            lead = batch.lead_length(b, i, seg)
            stops = end_ids | row.stops_of(i)
            if budget <= 0 or any(t in end_ids for t in seg) or any(t in stops for t in seg[lead:]):
                continue
            extra = min(budget, max(8, (end - start) // 2))
            batch.grow(b, i, extra)
            grown.append((b, i, extra))
            rows.initial[b] = int(batch.masked[b].sum())
            rows.row_step[b] = 0
            rows.row_steps[b] = extra if params.steps is None else max(1, params.steps * extra // max(end - start, 1))
    return grown
