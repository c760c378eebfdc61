"""The one denoising loop. Policies (what to commit, what to cache) plug in through `DenoiseParams`.

Each step: predict every masked position (a full forward, or only the mask spans against cached K/V of
the fixed text), propose a token and a confidence per position, let the commit rule pick positions,
write them, then grow spans that filled without an end token. Fixed text is never written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from engine.canvas_state import CanvasBatch, query_positions
from engine.loader import LoadedModel
from engine.models.layers import ForwardContext, fused_kernels_only
from engine.params import DenoiseParams
from engine.policies import (
    dream_count,
    end_run,
    llada_count,
    propose,
    select_threshold,
    select_top_k,
    threshold_confidence,
)
from engine.prefix_cache import DocKV, warm_layers
from engine.row_cache import RowCache


@dataclass
class Stats:
    new_tokens: int = 0
    forward_passes: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_forward(self) -> float:
        return self.new_tokens / self.forward_passes if self.forward_passes else 0.0

    def add(self, other: Stats) -> Stats:
        return Stats(self.new_tokens + other.new_tokens, self.forward_passes + other.forward_passes,
                     self.seconds + other.seconds)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    token_ids: list[int]


@dataclass(frozen=True)
class InfillRequest:
    """`span_stops[i]`: tokens that end span i as an end token does (with fill_after_eos the masks after
    the first one become end tokens, and the span does not grow), e.g. the line breaks of a one-line
    completion, whose text after the first line break is never used. Missing entries stop nothing."""

    canvas: list[int]
    doc_id: str | None = None
    max_grow: int = 0
    span_stops: tuple[frozenset[int], ...] = ()


@dataclass
class InfillResult:
    canvas: list[int]
    spans: list[Span]
    stats: Stats = field(default_factory=Stats)
    cancelled: bool = False


class Denoiser:
    def __init__(self, loaded: LoadedModel) -> None:
        self.m = loaded
        self.shifted = loaded.family.shifted_logits

    def run(
        self,
        requests: list[InfillRequest],
        params: DenoiseParams,
        cancel: Callable[[], bool] | None = None,
        warm: DocKV | None = None,
    ) -> tuple[list[InfillResult], DocKV | None]:
        with torch.inference_mode(), fused_kernels_only(self.m.device):
            return self._run(requests, params, cancel, warm)

    def _run(
        self,
        requests: list[InfillRequest],
        params: DenoiseParams,
        cancel: Callable[[], bool] | None,
        warm: DocKV | None,
    ) -> tuple[list[InfillResult], DocKV | None]:
        sp = self.m.special
        batch = CanvasBatch.build([list(r.canvas) for r in requests], [r.max_grow for r in requests],
                                  sp.mask_id, sp.pad_id, self.m.device, [r.span_stops for r in requests])
        n = len(requests)
        started = time.perf_counter()
        gen = torch.Generator(device=self.m.device).manual_seed(params.seed)
        stats = [Stats() for _ in range(n)]
        initial = batch.masked.sum(-1)
        row_steps = initial.clamp(min=1) if params.steps is None else torch.full_like(initial, params.steps)
        row_step = torch.zeros_like(initial)
        use_cache = params.cache == "fixed"
        kv = RowCache(len(self.m.model.model.layers), n, batch.x.shape[1], self.m.device)
        since_full = torch.zeros(n, dtype=torch.long)
        stale = torch.ones(n, dtype=torch.bool)  # rows whose cached K/V must be recomputed in full
        llada_reference = params.rule == "reference" and self.m.family.name == "llada"
        precision = torch.float64 if llada_reference else torch.float32
        rerun = torch.zeros_like(batch.masked)  # positions whose cached K/V are out of date
        cancelled = False
        if use_cache and warm is not None and n == 1:
            warmed = warm_layers(warm, batch.row_ids(0), sp.mask_id, self.m.model)
            if warmed is not None:
                kv.layers, edited = warmed
                rerun[0, edited[0]] = True
                stale[0] = False

        while bool(batch.masked.any()):
            if cancel is not None and cancel():
                cancelled = True
                break
            active = batch.masked.any(-1).cpu()
            candidates = batch.leading_masks(params.block)  # the masks this step may commit
            full = stale | ~torch.tensor(use_cache).expand(n)
            if params.refresh_every:
                full |= since_full >= params.refresh_every
            logits_m = self._predict(batch, candidates, kv if use_cache else None, full & active, ~full & active,
                                     rerun | batch.around_spans(params.near, rerun))
            since_full = torch.where(full, 1, since_full + 1)
            stale[:] = False
            logits_m[:, sp.mask_id] = float("-inf")  # a committed mask would stay masked forever
            if params.eos_penalty:
                logits_m[:, sorted(sp.end_ids)] -= params.eos_penalty
            for b in range(n):
                stats[b].forward_passes += int(active[b])
            tokens, score = propose(logits_m, params.alg, params.temperature, params.top_p, gen, precision)
            commit = self._select(batch, candidates, score, params, initial, row_step, row_steps)
            where = candidates.nonzero(as_tuple=True)
            new_x = batch.x.clone()
            new_x[where] = torch.where(commit[where], tokens, batch.x[where])
            if params.rule == "threshold" and params.fill_after_eos:
                proposed = torch.full_like(batch.x, sp.mask_id)
                proposed[where] = tokens
                self._fill_after_eos(batch, new_x, proposed)
            spans_before = [self._open_spans(batch, b) for b in range(n)]
            rerun = new_x != batch.x
            batch.x = new_x
            row_step += active.to(row_step.device).long()
            stale |= self._grow(batch, spans_before, params, initial, row_step, row_steps)
            kv.fit_width(batch.x.shape[1])
            rerun = torch.nn.functional.pad(rerun, (0, batch.x.shape[1] - rerun.shape[1]))

        seconds = time.perf_counter() - started
        results = [self._result(batch, b, stats[b], seconds, cancelled) for b in range(n)]
        keep = None
        if use_cache and n == 1 and requests[0].doc_id is not None and not cancelled and kv.ready:
            keep = DocKV(kv.ids[0, : batch.lengths[0]].tolist(), kv.trimmed(batch.lengths[0]))
        return results, keep

    # -- forwards -------------------------------------------------------------------------------

    def _src(self, masked: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows, pos = masked.nonzero(as_tuple=True)
        return rows, (pos - 1 if self.shifted else pos)

    def _predict(self, batch: CanvasBatch, masked: torch.Tensor, kv: RowCache | None, full: torch.Tensor,
                 partial: torch.Tensor, rerun: torch.Tensor) -> torch.Tensor:
        """Logits (M, V) for the masked positions, in `masked.nonzero()` order.

        Rows due a refresh (or every row, without a cache) run in full; the others run as queries only
        the positions whose logits are read (the masks, or the position before each mask when logits
        are shifted), their masks, and `rerun` (tokens committed last step, edited text, and the fixed
        text next to the spans), against their cached K/V; finished rows do not run. Each row's result
        depends on that row alone, whatever else is batched.
        """
        rows_m, src_m = self._src(masked)
        need = masked | rerun
        need[rows_m, src_m] = True
        out: torch.Tensor | None = None
        for group, is_full in ((full.nonzero().flatten(), True), (partial.nonzero().flatten(), False)):
            if group.numel() == 0:
                continue
            group = group.to(batch.x.device)
            x, real = batch.x[group], batch.real[group]
            key_mask = None if bool(real.all()) else real
            local = torch.full((batch.x.shape[0],), -1, dtype=torch.long, device=batch.x.device)
            local[group] = torch.arange(group.numel(), device=group.device)
            pick = local[rows_m] >= 0
            r, src = local[rows_m[pick]], src_m[pick]
            if is_full:
                ctx = ForwardContext([None] * kv.n_layers, key_mask) if kv is not None else None
                logits = self.m.model(x, None, key_mask, ctx, logits_at=(r, src))
                if kv is not None and ctx is not None:
                    kv.store(group, ctx.layers, x)
            else:
                assert kv is not None
                query = query_positions(need[group])
                ctx = ForwardContext(kv.select(group), key_mask, query)
                slot = torch.full_like(x, -1)
                slot.scatter_(1, query, torch.arange(query.shape[1], device=query.device).expand_as(query))
                logits = self.m.model(x.gather(1, query), query, key_mask, ctx, logits_at=(r, slot[r, src]))
                kv.update(group, ctx.layers, query, x)
            if out is None:
                out = logits.new_empty((rows_m.numel(), logits.shape[-1]))
            out[pick] = logits
        assert out is not None
        return out

    # -- commit rules ---------------------------------------------------------------------------

    def _select(self, batch, masked, score, params, initial, row_step, row_steps) -> torch.Tensor:
        full_score = torch.full(batch.x.shape, float("-inf"), device=batch.x.device, dtype=score.dtype)
        full_score[masked] = score
        if params.rule == "threshold":
            conf = torch.full_like(full_score, -1.0)
            conf[masked] = threshold_confidence(score.float(), params.alg)
            return select_threshold(full_score, conf, params.threshold, batch.span_groups())
        if self.m.family.name == "llada":
            k = llada_count(initial, row_step, row_steps)
        else:
            k = dream_count(masked.sum(-1), row_step, row_steps, params.eps)
        return select_top_k(full_score, k)

    def _fill_after_eos(self, batch: CanvasBatch, new_x: torch.Tensor, proposed: torch.Tensor) -> None:
        end_ids = self.m.special.end_ids
        for b, row in enumerate(batch.rows):
            for i, (start, end) in enumerate(row.spans):
                seg, old, prop = (t[b, start:end].tolist() for t in (new_x, batch.x, proposed))
                filled = end_run(seg, old, prop, end_ids, end_ids | row.stops_of(i), self.m.special.eos_id,
                                 batch.mask_id)
                if filled != seg:
                    new_x[b, start:end] = torch.tensor(filled, dtype=new_x.dtype, device=new_x.device)

    # -- spans ----------------------------------------------------------------------------------

    def _open_spans(self, batch: CanvasBatch, b: int) -> list[bool]:
        return [bool((batch.x[b, s:e] == batch.mask_id).any()) for s, e in batch.rows[b].spans]

    def _grow(self, batch, spans_before, params, initial, row_step, row_steps) -> torch.Tensor:
        """Grow spans that filled with no end token; the rows that grew, whose cached K/V now sit at
        the wrong positions and must be recomputed."""
        refresh = torch.zeros(len(batch.rows), dtype=torch.bool)
        for b, row in enumerate(batch.rows):
            for i in range(len(row.spans) - 1, -1, -1):
                start, end = row.spans[i]
                ends = self.m.special.end_ids | row.stops_of(i)
                if not spans_before[b][i] or bool((batch.x[b, start:end] == batch.mask_id).any()):
                    continue
                budget = row.max_grow - row.grown
                if budget <= 0 or any(t in ends for t in batch.x[b, start:end].tolist()):
                    continue
                refresh[b] = True
                extra = min(budget, max(8, (end - start) // 2))
                batch.grow(b, i, extra)
                initial[b] = int(batch.masked[b].sum())
                row_step[b] = 0
                row_steps[b] = extra if params.steps is None else max(1, params.steps * extra // max(end - start, 1))
        return refresh

    def _result(self, batch: CanvasBatch, b: int, stats: Stats, seconds: float, cancelled: bool) -> InfillResult:
        ids = batch.row_ids(b)
        ends = self.m.special.end_ids
        spans = [Span(s, e, ids[s:e]) for s, e in batch.rows[b].spans]
        stats.new_tokens = sum(1 for sp in spans for t in sp.token_ids if t not in ends and t != batch.mask_id)
        stats.seconds = seconds
        return InfillResult(ids, spans, stats, cancelled)
