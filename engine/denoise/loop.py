"""The one denoising loop. A family plugs in what a step computes and what it commits
(`engine.denoise.seam`); everything else here is the same for every family.

Each step: ask the commit policy which positions to propose for, predict them (`Predictor`: a full forward,
or only some positions against cached K/V), propose a token and a confidence per position, let the commit
policy write some of them, then grow spans that filled without an end token. Fixed text is never written.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import torch

from engine.cache.doc_cache import DocKV
from engine.denoise.canvas_batch import CanvasBatch
from engine.denoise.margins import record_margins
from engine.denoise.policies import gumbel_noise, propose
from engine.denoise.rows import LoopRows
from engine.denoise.seam import LoadedModel
from engine.denoise.state import DocKeys, LoopState, RowFeed
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
        documents: DocKeys | None = None,
        feed: RowFeed | None = None,
    ) -> list[InfillResult]:
        """Denoise every row. With `documents`, a row naming a document starts from its kept keys and, when
        it finishes, keeps its own for the document's next request (`engine.denoise.state.DocKeys`). With a
        `feed` (`engine.denoise.state`), requests join between steps and each row is handed to `feed.done`
        and leaves the batch as soon as it is done."""
        with torch.inference_mode(), fused_kernels_only(self.loaded.device):
            state = self._start(requests, params, documents)
            while state.open():
                if feed is not None and (joining := feed.admit()):
                    state.join(self._build(joining), joining, params.steps)
                    self._warm(state, len(joining), params)
                if cancel is not None and cancel():
                    state.cancelled = True
                    break
                if state.leave_cancelled():
                    if feed is not None:
                        state.hand_over(feed)
                    if not state.open():
                        break
                self.step(state, params, feed)
                if feed is not None:
                    state.hand_over(feed)
            return self._finish(state, requests, feed)

    def prefill(self, request: InfillRequest, params: DenoiseParams, warm: DocKV | None = None) -> DocKV | None:
        """Run only the first step's forward over `request` (what the fixed text needs: all of it, or what
        `warm` lacks) and return what the document keeps, writing nothing."""
        with torch.inference_mode(), fused_kernels_only(self.loaded.device):
            state = self._start([request], params, None)
            if warm is not None:
                state.predictor.warm(warm, state.batch, 0)
            return self._prefill(state)

    def _prefill(self, state: LoopState) -> DocKV | None:
        """The first step's forward over the one row of `state`, counted in its stats; what it keeps."""
        _, targets = state.commit.targets(state.batch)
        _, ran = state.predictor.predict(state.batch, targets, state.changed)
        state.rows.counted(torch.ones(1, dtype=torch.long), ran, time.perf_counter() - state.started)
        return state.predictor.keep(state.batch, 0)

    def _build(self, requests: list[InfillRequest]) -> CanvasBatch:
        sp = self.special
        return CanvasBatch.build([list(r.canvas) for r in requests], [r.max_grow for r in requests],
                                 sp.mask_id, sp.pad_id, self.loaded.device, [r.span_stops for r in requests],
                                 [r.span_leads for r in requests], [r.span_ends for r in requests],
                                 [r.span_refs for r in requests], [r.span_rivals for r in requests])

    def _start(self, requests: list[InfillRequest], params: DenoiseParams, documents: DocKeys | None) -> LoopState:
        family = self.loaded.family
        batch = self._build(requests)
        predictor = family.predictor(self.loaded, batch, params)
        commit = family.commit(self.loaded, params, self.special)
        commit.begin(batch)
        rows = LoopRows.start(requests, batch.masked, params.steps, 0)
        state = LoopState(batch, rows, predictor, commit, self.special.end_ids, torch.zeros_like(batch.masked),
                          taken=len(requests), documents=documents if params.cache == "fixed" else None)
        self._warm(state, len(requests), params)
        return state

    def _warm(self, state: LoopState, n: int, params: DenoiseParams) -> None:
        """The last `n` rows (just started or joined) start from their documents' kept keys. Rows of a
        document that has none yet share one prefill, the first's, when several of them came in together (a
        completion's alternatives). The first of them keeps its keys for the document when it is done: the
        newest text of the document, where an earlier row of it still runs (a keystroke's request that the
        next one supersedes)."""
        if state.documents is None:
            return
        named = [(b, doc_id) for b in range(len(state.rows.index) - n, len(state.rows.index))
                 if (doc_id := state.rows.requests[b].doc_id) is not None]
        counts = Counter(doc_id for _, doc_id in named)
        shared: dict[str, DocKV | None] = {}
        for b, doc_id in named:
            if doc_id not in shared:
                state.keeper[doc_id] = state.rows.index[b]
                kept = state.documents.get(doc_id)
                if kept is None and counts[doc_id] > 1:
                    alone = self._start([state.rows.requests[b]], params, None)
                    kept = self._prefill(alone)
                    state.rows.stats[b] = alone.rows.stats[0]  # its prefill is the row's first forward
                shared[doc_id] = kept
            if (kept := shared[doc_id]) is not None:
                state.predictor.warm(kept, state.batch, b)

    def step(self, state: LoopState, params: DenoiseParams, feed: RowFeed | None) -> None:
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
        noise = None
        if params.temperature > 0:
            keys = [(rows.index[b], p) for b, p in targets.nonzero().tolist()]
            noise = gumbel_noise(params.seed, keys, logits.shape[-1], logits.device)
        tokens, score = propose(logits, params.alg, params.temperature, params.top_p, noise, state.commit.precision)
        refused = batch.refuse_early_ends(targets, tokens, logits, self.special.end_ids)
        if refused:
            again = torch.tensor(refused, device=tokens.device)
            tokens[again], score[again] = propose(logits[again], params.alg, params.temperature, params.top_p,
                                                  None if noise is None else noise[again], state.commit.precision)
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

    def _finish(self, state: LoopState, requests: list[InfillRequest], feed: RowFeed | None) -> list[InfillResult]:
        batch, rows = state.batch, state.rows
        if batch.drafts is not None:  # a cancelled run leaves unverified drafts: they were never written
            batch.x[batch.drafts] = self.special.mask_id
        for b, i in enumerate(rows.index):
            state.done[i] = state.finish(b, state.cancelled or rows.left[b])
            if feed is not None:
                feed.done(i, state.done[i])
        return [state.done[i] for i in range(len(requests))]


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
