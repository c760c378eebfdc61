"""The two commit policies (`engine.denoise.seam.CommitPolicy`): in place, and leading runs.

`InPlaceCommit` (full-attention families: Dream, LLaDA) may write any mask of a span: by confidence
threshold, or by the family's own schedule of tokens per step (`Family.schedule`) for exact reproduction.
`LeadingRunCommit` (families that write left to right: the anchored default) only ever writes the masks
right after a span's written tokens, so what is written stays a leading run, which such a family's exact
cache relies on; greedily it drafts and verifies (`policies.speculate`), so its output is exactly
one-token-per-step decoding whatever it drafts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from engine.denoise.drafting import PRIOR_KEPT, DraftPolicy, Plan
from engine.denoise.policies import (
    end_run,
    select_leading_run,
    select_threshold,
    select_top_k,
    speculate,
    threshold_confidence,
)

if TYPE_CHECKING:
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.denoise.rows import LoopRows
    from engine.denoise.seam import LoadedModel
    from engine.params import DenoiseParams
    from engine.types import SpecialTokens


class InPlaceCommit:
    def __init__(self, loaded: LoadedModel, params: DenoiseParams, special: SpecialTokens) -> None:
        self.params = params
        self.special = special
        self.schedule = loaded.family.schedule
        reference = params.rule == "reference"
        self.precision = loaded.family.reference_precision if reference else torch.float32
        self.fills_after_end = params.rule == "threshold" and params.fill_after_eos

    def begin(self, batch: CanvasBatch) -> None:
        pass

    def targets(self, batch: CanvasBatch) -> tuple[torch.Tensor, torch.Tensor]:
        candidates = batch.leading_masks(self.params.block)
        return candidates, candidates

    def commit(self, batch: CanvasBatch, candidates: torch.Tensor, targets: torch.Tensor, tokens: torch.Tensor,
               score: torch.Tensor, rows: LoopRows) -> torch.Tensor:
        full_score = torch.full(batch.x.shape, float("-inf"), device=batch.x.device, dtype=score.dtype)
        full_score[candidates] = score
        if self.params.rule == "threshold":
            conf = torch.full_like(full_score, -1.0)
            conf[candidates] = threshold_confidence(score.float(), self.params.alg)
            picked = select_threshold(full_score, conf, self.params.threshold, batch.span_groups())
        else:
            masks_left = candidates.sum(-1)
            picked = select_top_k(full_score, self.schedule(masks_left, rows.initial, rows.row_step, rows.row_steps,
                                                            self.params.eps))
        where = targets.nonzero(as_tuple=True)
        new_x = batch.x.clone()
        new_x[where] = torch.where(picked[where], tokens, batch.x[where])
        if self.fills_after_end:
            proposed = torch.full_like(batch.x, batch.mask_id)
            proposed[where] = tokens
            fill_after_end(batch, new_x, proposed, self.special)
        return new_x


class LeadingRunCommit:
    """Greedy (`verify`), the lookahead and the drafts per span come from the model's `DraftPolicy` each
    step (what rows cost on this device against how often drafts are kept), unless `params.block` sets
    the lookahead; the reference rule and the adapter off write one token per span per step."""

    def __init__(self, loaded: LoadedModel, params: DenoiseParams, special: SpecialTokens) -> None:
        self.params = params
        self.special = special
        self.precision = torch.float32
        self.verifies = params.verify
        ranked = params.rule == "threshold" and params.adapter
        self.threshold = params.threshold if ranked else float("inf")
        self.drafting: DraftPolicy | None = None
        if params.rule == "reference" or not params.adapter:  # no mask row is read
            self.plan = Plan(1, 0)
        elif params.block or not self.verifies:
            block = params.block or loaded.family.lookahead
            self.plan = Plan(block, block - 1)
        elif params.temperature > 0:  # sampled drafts are kept less often: not counted in the greedy rate
            self.plan = loaded.drafting.plan(PRIOR_KEPT)
        else:
            self.drafting = loaded.drafting
            self.plan = self.drafting.plan()

    def begin(self, batch: CanvasBatch) -> None:
        if self.verifies:
            batch.drafts = torch.zeros_like(batch.masked)

    def targets(self, batch: CanvasBatch) -> tuple[torch.Tensor, torch.Tensor]:
        if self.drafting is not None:
            self.plan = self.drafting.plan()
        candidates = batch.leading_masks(self.plan.lookahead)
        if batch.drafts is None:
            return candidates, candidates
        return candidates, candidates | batch.drafts

    def commit(self, batch: CanvasBatch, candidates: torch.Tensor, targets: torch.Tensor, tokens: torch.Tensor,
               score: torch.Tensor, rows: LoopRows) -> torch.Tensor:
        proposed = torch.full_like(batch.x, batch.mask_id)
        if self.verifies:
            new_x = self._speculate(batch, targets, tokens, score)
        else:
            conf = torch.full(batch.x.shape, -1.0, device=batch.x.device)
            conf[candidates] = threshold_confidence(score.float(), self.params.alg)
            picked = select_leading_run(conf, candidates, self.threshold, batch.span_groups(), batch.lead_open())
            where = targets.nonzero(as_tuple=True)
            new_x = batch.x.clone()
            new_x[where] = torch.where(picked[where], tokens, batch.x[where])
            proposed[where] = tokens
        fill_after_end(batch, new_x, proposed, self.special)
        self._end_spans(batch, new_x)
        return new_x

    def _speculate(self, batch: CanvasBatch, targets: torch.Tensor, tokens: torch.Tensor,
                   score: torch.Tensor) -> torch.Tensor:
        """Verified drafting (`policies.speculate`) for every row; updates `batch.drafts`."""
        assert batch.drafts is not None
        conf = threshold_confidence(score.float(), self.params.alg).tolist()
        rows, cols = (t.tolist() for t in targets.nonzero(as_tuple=True))
        proposed = tokens.tolist()
        single = batch.lead_open()
        new_x = batch.x.clone()
        drafts = torch.zeros_like(batch.drafts)
        end_ids = self.special.end_ids
        for b, row in enumerate(batch.rows):
            picked = [j for j, r in enumerate(rows) if r == b]
            if not picked:
                continue
            x = batch.x[b].tolist()
            old = batch.drafts[b].nonzero().flatten().tolist()
            out, kept = speculate(
                x, row.spans, [cols[j] for j in picked], set(old), {cols[j]: proposed[j] for j in picked},
                {cols[j]: conf[j] for j in picked}, self.threshold, batch.mask_id,
                [end_ids | row.stops_of(i) for i in range(len(row.spans))],
                set(single[b].nonzero().flatten().tolist()), most=self.plan.most)
            new_x[b] = torch.tensor(out, dtype=new_x.dtype, device=new_x.device)
            if kept:
                drafts[b, sorted(kept)] = True
            if self.drafting is not None:
                for start, end in row.spans:  # each span's run of drafts, in order: kept up to the first wrong one
                    run = [p for p in old if start <= p < end]
                    if run:
                        self.drafting.observe(len(run), _kept_run(run, out, x))
        batch.drafts = drafts
        return new_x

    def _end_spans(self, batch: CanvasBatch, new_x: torch.Tensor) -> None:
        """Close each span whose written text its SpanEnd calls complete: what follows the first complete
        prefix (tokens a step verified past it, masks, unverified drafts) becomes end tokens. Every prefix a
        step wrote is asked, as one-token-per-step decoding asks them, so a step that keeps several drafts
        ends where that decoding ends."""
        end_ids = self.special.end_ids
        for b, row in enumerate(batch.rows):
            for i, (start, end) in enumerate(row.spans):
                policy = row.end_of(i)
                if policy is None or i in row.finished or not batch.is_live(b):
                    continue
                seg = new_x[b, start:end].tolist()
                drafted = [False] * len(seg) if batch.drafts is None else batch.drafts[b, start:end].tolist()
                written = next((j for j, t in enumerate(seg) if t == batch.mask_id or drafted[j]), len(seg))
                ended = next((j for j, t in enumerate(seg[:written]) if t in end_ids), written)
                asked, row.asked[i] = row.asked.get(i, 0), ended
                complete = next((n for n in range(asked + 1, ended + 1) if policy.reached(seg[:n])), None)
                if complete is None:
                    continue
                row.finished.add(i)
                if complete < len(seg):
                    new_x[b, start + complete : end] = self.special.eos_id
                    if batch.drafts is not None:
                        batch.drafts[b, start + complete : end] = False


def fill_after_end(batch: CanvasBatch, new_x: torch.Tensor, proposed: torch.Tensor, special: SpecialTokens) -> None:
    """Make the end tokens of every span one run at its end (`policies.end_run`), in `new_x`; `proposed`
    holds the step's proposal at each target position (the mask id elsewhere)."""
    end_ids = special.end_ids
    for b, row in enumerate(batch.rows):
        if not batch.is_live(b):
            continue
        for i, (start, end) in enumerate(row.spans):
            seg, old, prop = (t[b, start:end].tolist() for t in (new_x, batch.x, proposed))
            filled = end_run(seg, old, prop, end_ids, end_ids | row.stops_of(i), special.eos_id,
                             batch.mask_id, batch.lead_length(b, i, seg))
            if filled != seg:
                new_x[b, start:end] = torch.tensor(filled, dtype=new_x.dtype, device=new_x.device)


def _kept_run(run: list[int], new: list[int], old: list[int]) -> int:
    """How many of a run of drafts at positions `run` (in order) a step kept: up to the first it replaced."""
    return next((i for i, p in enumerate(run) if new[p] != old[p]), len(run))
