"""Pure sampling and commit policies: tensors in, tensors out, randomness only from the given noise.

Proposals work on the logits of the masked positions only, (M, V), never on the whole canvas.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterator

import torch

from engine.params import Alg


def top_p_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Keep the smallest set of tokens whose probability mass reaches top_p (always the best one)."""
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
    cumulative = sorted_logits.softmax(-1).cumsum(-1)
    drop_sorted = cumulative > top_p
    drop_sorted[..., 1:] = drop_sorted[..., :-1].clone()
    drop_sorted[..., 0] = False
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, torch.finfo(logits.dtype).min)


def propose(
    logits: torch.Tensor,
    alg: Alg,
    temperature: float,
    top_p: float | None,
    noise: torch.Tensor | None,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A candidate token and a confidence score for each masked position, as Dream's sampler computes them.

    temperature 0 takes the argmax; otherwise a draw from softmax(logits / temperature): the argmax of the
    scaled logits plus `noise` (M, V), Gumbel noise (`gumbel_noise`).
    `dtype` float64 reproduces LLaDA's sampler, which ranks confidences in double precision.
    Scores: maskgit_plus = probability of the candidate, topk_margin = p1 - p2, entropy = sum p log p.
    """
    logits = logits.to(dtype)
    if temperature > 0:
        logits = logits / temperature
    if top_p is not None and top_p < 1.0:
        logits = top_p_filter(logits, top_p)
    probs = logits.softmax(-1)
    if temperature > 0:
        assert noise is not None, "sampling needs noise"
        tokens = (logits + noise.to(dtype)).argmax(-1)
        chosen = probs.gather(-1, tokens[:, None]).squeeze(-1)
    else:
        chosen, tokens = probs.max(-1)
    if alg == "maskgit_plus":
        score = chosen
    elif alg == "topk_margin":
        top2 = probs.topk(2, dim=-1).values
        score = top2[:, 0] - top2[:, 1]
    else:
        score = (probs * torch.log(probs + 1e-10)).sum(-1)
    return tokens, score


def gumbel_noise(seed: int, keys: list[tuple[int, int]], vocab: int, device: torch.device) -> torch.Tensor:
    """(len(keys), vocab) Gumbel noise, the same for a key (request, canvas position) whenever it is drawn.

    A position is proposed for more than once (a draft, then the step that verifies it, or a proposal a
    span end refused), from other logits each time as the text before it changes; the argmax of the logits
    plus noise fixed for the position is a draw from whichever logits hold when the token is written, so
    a seed writes the same tokens whatever the plan of drafts or the rows beside it, and verified drafting
    samples exactly what one-token-per-step decoding samples."""
    out = torch.empty((len(keys), vocab))
    generator = torch.Generator()
    for i, (request, position) in enumerate(keys):
        digest = hashlib.blake2b(f"{seed}/{request}/{position}".encode(), digest_size=8).digest()
        generator.manual_seed(int.from_bytes(digest, "little") >> 1)
        out[i].uniform_(generator=generator)
    return (-(-out.clamp_min(1e-20).log()).log()).to(device)


def threshold_confidence(score: torch.Tensor, alg: Alg) -> torch.Tensor:
    """Map a score into [0, 1] so one threshold means the same for every alg (entropy -> exp(-H))."""
    return score.exp() if alg == "entropy" else score


def dream_count(masked: torch.Tensor, step: torch.Tensor, steps: torch.Tensor, eps: float) -> torch.Tensor:
    """Tokens to reveal this step under Dream's `diffusion_generate` schedule, per row.

    timesteps = linspace(1, eps, steps + 1) (float32, as the official code builds them); at step i,
    t = ts[i], s = ts[i + 1] and k = int(masked * (1 - s / t)), every remaining mask at the last step.
    Computed per row (the official code averages the count over the batch; a batch of one agrees).
    """
    counts = []
    for n, i, total in zip(masked.tolist(), step.tolist(), steps.tolist()):
        if i >= total - 1:
            counts.append(n)
            continue
        ts = torch.linspace(1, eps, total + 1)
        counts.append(int(torch.tensor(float(n)) * (1 - ts[i + 1] / ts[i])))
    return torch.tensor(counts, dtype=torch.long, device=masked.device)


def llada_count(initial: torch.Tensor, step: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
    """LLaDA's `get_num_transfer_tokens`: the initial mask count spread evenly over the steps, the
    remainder going to the first steps."""
    base = torch.div(initial, steps, rounding_mode="floor")
    remainder = initial - base * steps
    return base + (step < remainder).long()


Schedule = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor]
"""A family's own tokens-per-step schedule, per row: (masks left, masks at the schedule's start, step,
steps, eps) -> tokens to reveal this step."""


def dream_schedule(masks_left: torch.Tensor, initial: torch.Tensor, step: torch.Tensor, steps: torch.Tensor,
                   eps: float) -> torch.Tensor:
    return dream_count(masks_left, step, steps, eps)


def llada_schedule(masks_left: torch.Tensor, initial: torch.Tensor, step: torch.Tensor, steps: torch.Tensor,
                   eps: float) -> torch.Tensor:
    return llada_count(initial, step, steps)


def select_top_k(score: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Per row of score (B, L) (-inf where nothing may be committed), the k[b] highest positions."""
    order = score.argsort(dim=-1, descending=True, stable=True)
    rank = torch.empty_like(order).scatter_(-1, order, torch.arange(score.shape[-1], device=score.device).expand_as(order))
    return (rank < k[:, None]) & torch.isfinite(score)


def select_threshold(
    score: torch.Tensor, confidence: torch.Tensor, threshold: float, groups: torch.Tensor
) -> torch.Tensor:
    """Every position with confidence >= threshold, plus the best-scoring position of every group.

    `groups` (B, L) numbers the mask spans of each row (-1 outside them). Guaranteeing progress per span
    rather than per row lets distant spans of one canvas advance side by side, so k spans take about the
    steps of the longest one, not the sum of them.
    """
    valid = torch.isfinite(score)
    picked = (confidence >= threshold) & valid
    n_groups = int(groups.max()) + 1 if groups.numel() else 0
    if n_groups == 0:
        return picked
    keyed = torch.where(valid & (groups >= 0), score, torch.full_like(score, float("-inf")))
    one_hot = groups[..., None] == torch.arange(n_groups, device=groups.device)  # (B, L, G)
    per_group = torch.where(one_hot, keyed[..., None], torch.full_like(keyed[..., None], float("-inf")))
    best = per_group.argmax(1)  # (B, G): the first best position of each group
    has_any = torch.isfinite(per_group.max(1).values)
    rows = torch.arange(score.shape[0], device=score.device)[:, None].expand_as(best)
    picked[rows[has_any], best[has_any]] = True
    return picked


def select_leading_run(
    confidence: torch.Tensor, candidates: torch.Tensor, threshold: float, groups: torch.Tensor, single: torch.Tensor
) -> torch.Tensor:
    """Left-to-right commits: the first candidate of every span, then the candidates right after it while
    their confidence is >= threshold (the run stops at the first that is not, or at a `single` position:
    a span whose lead is unfinished commits one token a step). Committed tokens stay a leading run of
    their span, which the anchored family's exact cache relies on."""
    picked = torch.zeros_like(candidates)
    for b in range(candidates.shape[0]):
        positions = candidates[b].nonzero().flatten().tolist()
        conf = confidence[b].tolist()
        previous = None
        for p in positions:
            new_span = previous is None or int(groups[b, p]) != int(groups[b, previous]) or p != previous + 1
            if new_span:
                picked[b, p] = True
                run_open = not bool(single[b, p])
            elif run_open and conf[p] >= threshold and bool(picked[b, previous]):
                picked[b, p] = True
            else:
                run_open = False
            previous = p
    return picked


def speculate(
    x: list[int], spans: list[list[int]], targets: list[int], drafts: set[int], proposed: dict[int, int],
    confidence: dict[int, float], threshold: float, mask_id: int, ends: list[frozenset[int]], single: set[int],
    lookup: bool = True, most: int = 8,
) -> tuple[list[int], set[int]]:
    """One row's step of verified drafting (self-speculative decoding), for left-to-right families.

    `proposed[p]` is the greedy token for position p from the row before it, computed this step with every
    token before p as input, drafts included. In each span, drafts (tokens written last step, unverified)
    are checked in order: one that equals its proposal is verified; the first that does not is replaced by
    its proposal (verified: everything before it was) and every later draft goes back to a mask. With all
    drafts verified, the first mask takes its proposal, and the next drafts are the tokens `lookup_draft`
    copies from elsewhere in the canvas when it finds any (with `lookup`), else the masks after it that
    are proposed with confidence >= threshold (never an end or stop token, never a span's last mask, never
    while its lead is unfinished: `single`; at most `most`). Every token kept is therefore the one greedy
    left-to-right decoding writes, whatever the drafts: they only set how many tokens a step can keep.
    Returns the row's new ids and its drafts.
    """
    out = list(x)
    new_drafts: set[int] = set()
    for (start, end), stop in zip(spans, ends):
        inside = [p for p in targets if start <= p < end]
        broken = False
        for p in (p for p in inside if p in drafts):
            if broken:
                out[p] = mask_id
            elif proposed[p] != x[p]:
                out[p] = proposed[p]
                broken = True
            elif x[p] in stop:
                broken = True
        masks = [p for p in inside if x[p] == mask_id]
        if broken or not masks:
            continue
        out[masks[0]] = proposed[masks[0]]
        if masks[0] in single or proposed[masks[0]] in stop:
            continue
        last_mask = max(p for p in range(start, end) if x[p] == mask_id)
        room = list(range(masks[0] + 1, last_mask))[:most]
        copied = lookup_draft(out, start, masks[0] + 1, len(room), mask_id) if lookup else []
        if copied:
            guesses = list(zip(room, copied))
        else:
            guesses = [(p, proposed[p]) for p in masks[1 : most + 1] if p < last_mask and confidence[p] >= threshold]
            guesses = [(p, t) for (p, t), q in zip(guesses, masks[1:]) if p == q]  # consecutive only
        for p, token in guesses:
            if token in stop or token == mask_id:
                break
            out[p] = token
            new_drafts.add(p)
    return out, new_drafts


def lookup_draft(ids: list[int], span_start: int, upto: int, limit: int, mask_id: int,
                 longest: int = 4, shortest: int = 2) -> list[int]:
    """Draft tokens copied from elsewhere in the canvas (prompt-lookup decoding): the tokens that followed
    the latest earlier occurrence of the span's last few written tokens (those in ids[span_start:upto],
    preceded by the text before the span), at most `limit` of them, never a mask. Code repeats names
    and patterns from its prefix and suffix; verification keeps only what the model would write anyway.
    The search runs on the ids as bytes (`bytes.rfind`): a Python scan cost 0.3 ms a step."""
    written = ids[max(0, span_start - longest) : upto]
    hay: bytes | None = None
    for n in range(min(longest, len(written)), shortest - 1, -1):
        tail = written[-n:]
        if mask_id in tail:
            continue
        hay = hay or array("i", ids).tobytes()
        # match starts i from the last one with a token after it down to 0, skipping the tail itself and
        # anything inside the span (i + n >= span_start and i < upto): after the span first, then before it
        for lo, hi in ((upto, len(ids) - n - 1), (0, min(span_start - n - 1, len(ids) - n - 1))):
            for i in _matches(hay, array("i", tail).tobytes(), lo, hi):
                follow = []
                for t in ids[i + n : i + n + limit]:
                    if t == mask_id:
                        break
                    follow.append(t)
                if follow:
                    return follow
    return []


def _matches(hay: bytes, needle: bytes, lo: int, hi: int) -> Iterator[int]:
    """The element offsets i in [lo, hi], last first, where `needle` (4-byte elements) occurs in `hay`."""
    if hi < lo:
        return
    end = hi * 4 + len(needle)
    while (at := hay.rfind(needle, lo * 4, end)) >= 0:
        if at % 4 == 0:
            yield at // 4
        end = at + len(needle) - 1  # only matches starting before this one


def end_run(
    span: list[int], before: list[int], proposed: list[int], end_ids: frozenset[int], stop_ids: frozenset[int],
    eos_id: int, mask_id: int, lead: int = 0,
) -> list[int]:
    """One span after a step's commits, with its end tokens made one run at its end.

    `before` is the span before the step, `proposed` the step's proposal at each candidate position
    (mask_id elsewhere). An end token committed this step takes with it the masks just before it whose
    own proposal is an end token too, so a tail the model fills with end tokens is committed in one step
    rather than one position per step from the right; then every mask after the span's first end or
    stop token becomes `eos_id` (DreamOn's pad-to-the-right). The first `lead` tokens (text the span must
    start with) are never stop tokens.
    """
    out = list(span)
    first_new = next((j for j in range(len(out)) if before[j] == mask_id and out[j] in end_ids), None)
    if first_new is not None:
        k = first_new - 1
        while k >= 0 and out[k] == mask_id and proposed[k] in end_ids:
            out[k] = eos_id
            k -= 1
    hit = next((j for j, t in enumerate(out) if t in end_ids or (t in stop_ids and j >= lead)), None)
    if hit is not None:
        out[hit + 1 :] = [eos_id if t == mask_id else t for t in out[hit + 1 :]]
    return out
