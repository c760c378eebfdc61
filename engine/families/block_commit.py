"""The commit policy of the block-diffusion families (`engine.denoise.seam.CommitPolicy`).

A step may write only masks of the current block of each row (`engine/families/block_layout.py`), and of the first
span that still has masks, since a block model writes its gaps one after the other, and the masks that pad
that span's last block (the family's sampler decodes whole blocks): they are candidates like the span's own,
and are dropped as soon as the span holds no mask. Inside the block the family's own sampler
(`Family.block`, a `BlockDecoding`) decides:
- Fast-dLLM v2: candidates are the first sub-block that still holds a mask, and a block's first token,
  predicted from the previous block's last row, is written alone as soon as that block is complete;
- each step commits every candidate whose confidence exceeds the threshold when there are at least the
  step's count of them, else the step's count of most confident candidates. The count spreads the block
  over `steps` steps per block (the remainder first; the official `get_num_transfer_tokens`), one a step
  by default. The reference rule runs the family's own threshold (strictly exceeded; none for SDAR's
  static schedule and for Fast-dLLM v2's `generate`, whose threshold of 1 no probability exceeds) with
  `params.steps` steps per block; the threshold rule runs `params.threshold` (reached) with one a step.
  LLaDA2 runs at most as many steps per block as the gap has tokens to write (`steps_within_length`).
While a span's lead (`engine.types.Lead`) is unfinished, a step writes the lead's next token alone and
counts no step of the block's schedule: the official samplers read that text as the end of their prompt.
A span ends as soon as its first end token (or stop token, after its lead) has no mask before it, or its
`SpanEnd` is reached by the tokens written before its first mask: its remaining masks become EOS, so the
text up to that token is exactly what the family's sampler writes, which stops at the end token too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from engine.denoise.policies import threshold_confidence
from engine.families.block_layout import BlockLayout, block_size, drop_pads, pad_gaps, pad_masks

if TYPE_CHECKING:
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.denoise.rows import LoopRows
    from engine.denoise.seam import LoadedModel
    from engine.params import DenoiseParams
    from engine.types import SpecialTokens


class BlockCommit:
    def __init__(self, loaded: LoadedModel, params: DenoiseParams, special: SpecialTokens) -> None:
        decoding = loaded.family.block
        assert decoding is not None, f"family {loaded.family.name} has no block decoding"
        self.special = special
        self.reads_suffix = loaded.family.reads_suffix
        self.size = block_size(loaded, params)
        self.sub = decoding.sub_block if 0 < decoding.sub_block < self.size else 0
        self.first_from_previous = decoding.first_from_previous
        reference = params.rule == "reference"
        self.threshold = decoding.reference_threshold if reference else params.threshold
        self.strict = reference
        self.steps = (params.steps or self.size) if reference else self.size
        self.within_length = decoding.steps_within_length
        self.alg = "maskgit_plus" if reference else params.alg
        self.precision = torch.float32
        # per batch row, from this step's `targets`: its current block, whether it writes its lead, its open
        # gap [start, end) and how many tokens that gap writes after its lead
        self._current: list[int] = []
        self._leading: list[bool] = []
        self._gap: list[tuple[int, int] | None] = []
        self._writes: list[int] = []
        self._block_steps: dict[int, tuple[int, int]] = {}  # request index -> (block, steps run in it)

    def begin(self, batch: CanvasBatch) -> None:
        pass

    def targets(self, batch: CanvasBatch) -> tuple[torch.Tensor, torch.Tensor]:
        layout = BlockLayout.of(batch, self.size, self.special.end_ids, self.reads_suffix)
        if pad_gaps(batch, layout):
            layout = BlockLayout.of(batch, self.size, self.special.end_ids, self.reads_suffix)
        masked = batch.masked
        leading = batch.lead_open().any(-1)
        pads = pad_masks(batch) & ~leading[:, None]
        current = layout.current(masked)
        self._current, self._leading = current.tolist(), leading.tolist()
        self._gaps(batch, masked)
        candidates = (masked | pads) & (layout.block == current[:, None]) & (current >= 0)[:, None]
        candidates &= first_open_span(batch, masked) | pads
        offset = torch.where(layout.order >= 0, layout.order % self.size, 0)
        if self.first_from_previous:
            first = candidates & (offset == 0) & (layout.order > 0)
            candidates = torch.where(first.any(-1, keepdim=True), first, candidates)
        if self.sub:
            part = torch.where(candidates, offset // self.sub, self.size)
            candidates &= part == part.min(-1, keepdim=True).values
        candidates &= batch.leading_masks(0) | pads
        return candidates, candidates

    def _gaps(self, batch: CanvasBatch, masked: torch.Tensor) -> None:
        self._gap, self._writes = [], []
        for b, row in enumerate(batch.rows):
            found = next(((i, s, e) for i, (s, e) in enumerate(row.spans) if bool(masked[b, s:e].any())), None)
            if found is None:
                self._gap.append(None)
                self._writes.append(0)
                continue
            i, start, end = found
            self._gap.append((start, end))
            self._writes.append(end - start - batch.lead_length(b, i, batch.x[b, start:end].tolist()))

    def commit(self, batch: CanvasBatch, candidates: torch.Tensor, targets: torch.Tensor, tokens: torch.Tensor,
               score: torch.Tensor, rows: LoopRows) -> torch.Tensor:
        conf = threshold_confidence(score.float(), self.alg)
        rows_c, cols_c = candidates.nonzero(as_tuple=True)
        chosen = torch.zeros_like(rows_c, dtype=torch.bool)
        for b in sorted(set(rows_c.tolist())):  # Tensor.unique: unannotated in torch
            mine = (rows_c == b).nonzero().flatten()
            count = 1 if self._leading[b] else self._count(rows.index[b], self._current[b], self._writes[b])
            c = conf[mine]
            high = torch.zeros_like(c, dtype=torch.bool) if self.threshold is None else (
                c > self.threshold if self.strict else c >= self.threshold)
            if int(high.sum()) >= count:
                chosen[mine[high]] = True
            else:
                # the first of equal confidences, as Fast-dLLM v2's argmax takes it
                chosen[mine[c.sort(descending=True, stable=True).indices[:count]]] = True
        new_x = batch.x.clone()
        new_x[rows_c, cols_c] = torch.where(chosen, tokens, batch.x[rows_c, cols_c])
        self._end_spans(batch, new_x)
        for b, gap in enumerate(self._gap):
            if batch.rows[b].pads and gap is not None and not bool((new_x[b, gap[0] : gap[1]] == batch.mask_id).any()):
                drop_pads(batch, new_x, b)
        return new_x

    def _count(self, request: int, block: int, writes: int) -> int:
        """Tokens this step commits at least (unless fewer candidates are left), and count the step."""
        seen, done = self._block_steps.get(request, (-1, 0))
        if seen != block:
            done = 0
        self._block_steps[request] = (block, done + 1)
        steps = max(1, min(self.steps, writes)) if self.within_length else self.steps
        base, extra = divmod(self.size, steps)
        return max(1, base + (done < extra))

    def _end_spans(self, batch: CanvasBatch, new_x: torch.Tensor) -> None:
        mask_id, end_ids = batch.mask_id, self.special.end_ids
        for b, row in enumerate(batch.rows):
            if not batch.is_live(b):
                continue
            for i, (start, end) in enumerate(row.spans):
                seg = new_x[b, start:end].tolist()
                if mask_id not in seg:
                    continue
                first_mask = seg.index(mask_id)
                lead = batch.lead_length(b, i, seg)
                stops = end_ids | row.stops_of(i)
                hit = next((j for j, t in enumerate(seg) if t in end_ids or (t in stops and j >= lead)), len(seg))
                policy = row.end_of(i)
                ended = hit < first_mask or (
                    policy is not None and i not in row.finished and policy.reached(seg[:first_mask]))
                if ended:
                    row.finished.add(i)
                    new_x[b, start:end] = torch.where(new_x[b, start:end] == mask_id, self.special.eos_id,
                                                      new_x[b, start:end])


def first_open_span(batch: CanvasBatch, masked: torch.Tensor) -> torch.Tensor:
    """(B, L): the positions of each row's first span that still holds a mask."""
    out = torch.zeros_like(masked)
    for b, row in enumerate(batch.rows):
        for start, end in row.spans:
            if bool(masked[b, start:end].any()):
                out[b, start:end] = True
                break
    return out
