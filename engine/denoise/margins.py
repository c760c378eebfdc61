"""How much the model wanted to change a span's text: the margin at the first token that left it.

A request may give a span the text it replaces (`engine.types.Reference`). As the span's tokens become
final (not masks, not unverified drafts), they are checked against that text from the span's start; at the
first one that does not keep it, the span's margin is the log-probability of that token minus the best
log-probability of a token that would have kept the text, both from the logits the step chose it with. A
family that writes left to right finalizes a span's tokens in order, so that context is exactly the text
both continuations share: the margin is the model's own preference for changing the text there. A span may
also carry a rival text (a rule's proposal): at the first token that does not keep both texts (where the span
parts from one of them, whether it keeps the reference there or not), its rival margin is the best
log-probability of a token that keeps the rival minus the best one that keeps the reference, from the same
logits: how much the model prefers the rival's change to no change. A token that keeps both (a shorter
token both texts start with there, "Json" before "Response" and "View") decides nothing and is left out of
both sides: were it the best of each, every such span would weigh 0; where the same tokens keep both (a
written token left both before they parted), the span gets no rival margin. A span that keeps its text
throughout still gets one, from the point where the rival parted from it.
"""

from __future__ import annotations

import torch

from engine.denoise.canvas_batch import CanvasBatch


def record_margins(batch: CanvasBatch, targets: torch.Tensor, logits: torch.Tensor, end_ids: frozenset[int]) -> None:
    """After a step that wrote `batch.x` from `logits` (M, V, for `targets.nonzero()` in order): note the margin
    of every span with a reference whose final tokens first left it this step."""
    if not any(row.refs for row in batch.rows):
        return
    order = torch.full(batch.x.shape, -1, dtype=torch.long, device=batch.x.device)
    order[targets] = torch.arange(int(targets.sum()), device=batch.x.device)
    for b, row in enumerate(batch.rows):
        if not batch.is_live(b):
            continue
        for i, (start, end) in enumerate(row.spans):
            ref = row.ref_of(i)
            if ref is None or i in row.margins:
                continue
            seg = batch.x[b, start:end].tolist()
            drafted = batch.drafts[b, start:end].tolist() if batch.drafts is not None else [False] * len(seg)
            final = next((j for j, t in enumerate(seg) if t == batch.mask_id or drafted[j]), len(seg))
            rival = row.rival_of(i)
            j = row.kept.get(i, 0)
            while j < final:
                keeps = ref.follows(seg[:j], seg[j])
                if (rival is not None and i not in row.rival_margins and not (keeps and rival.follows(seg[:j], seg[j]))
                        and all(rival.follows(seg[:k], seg[k]) for k in range(j))):
                    m = int(order[b, start + j])  # where the written text parts from the reference or the rival
                    if m >= 0:
                        scores = torch.log_softmax(logits[m].float(), -1)
                        for_rival = rival.alternatives(seg[:j]) or end_ids
                        for_ref = ref.alternatives(seg[:j]) or end_ids
                        if for_rival != for_ref:  # the same tokens keep both texts: no verdict here
                            row.rival_margins[i] = (_best(scores, for_rival - for_ref)
                                                    - _best(scores, for_ref - for_rival))
                if not keeps or seg[j] in end_ids:
                    break
                j += 1
            row.kept[i] = j
            if j >= final or (seg[j] in end_ids and ref.follows(seg[:j], seg[j])):
                continue
            m = int(order[b, start + j])
            if m < 0:
                row.margins[i] = 0.0
                continue
            scores = torch.log_softmax(logits[m].float(), -1)
            row.margins[i] = float(scores[seg[j]]) - _best(scores, ref.alternatives(seg[:j]) or end_ids)


def _best(scores: torch.Tensor, ids: frozenset[int]) -> float:
    """The highest log-probability among `ids` (those inside the vocabulary)."""
    inside = [t for t in ids if t < scores.shape[-1]]
    return float(scores[inside].max()) if inside else float("-inf")
