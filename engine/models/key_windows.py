"""Attention of a narrow anchored forward over only the keys its rows may see, on a CPU.

A gap row sees the canvas from its start to itself (the fixed text before its gap, other gaps masked)
and its own gap's right-context copies, one stretch at the end of the keys (`anchored.right_view`). With
one gap that is most of the keys. With eight gaps in one canvas the copies alone are eight stretches of
up to 256 keys, and every row of every gap ran the kernel over all of them (3,009 keys for a 968-token
canvas), a mask throwing three quarters away: a step over one gap's row cost 14 ms of attention where its
own keys take a third of that. Grouping a forward's rows by their two key windows (canvas, copies) and
running each group over just those, the two parts joined by their log-sum-exp, reads only what is seen.

The split changes the order of the sums, so results agree with one masked call to float rounding, not bit
for bit; it is used only where it is estimated to save a fifth (`cost`), so a one-gap canvas, whose rows
see most keys, keeps the one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

SAVING = 0.8
"""Windows are used when their estimated cost is at most this share of one masked call's."""
CALL_KEYS = 500
ROW_SHARE = 0.34
"""A kernel call costs about as much as reading CALL_KEYS keys, and each query row over a key ROW_SHARE of
reading it (2-core AMX Xeon, float32, 3,009 keys: 250 us for one row, 640 for 8, 2,550 for 41; a call over
376 keys 41 us)."""


def cost(rows: int, keys: int, calls: int = 1) -> float:
    """Estimated cost of `calls` kernel calls for `rows` query rows over `keys` keys in all."""
    return CALL_KEYS * calls + keys * (1 + ROW_SHARE * rows)


@dataclass(frozen=True)
class Window:
    """Query rows `rows` of batch row `b` and the keys they see: canvas keys [lo, hi), copies [clo, chi)
    (absolute key indices; an empty range when clo == chi)."""

    b: int
    rows: torch.Tensor
    lo: int
    hi: int
    clo: int
    chi: int


def _bounds(seen: torch.Tensor, offset: int) -> tuple[list[int], list[int]]:
    """Per row of `seen` (R, K) bool, the first and one past the last True column (+ offset); (0, 0) when
    the row sees none."""
    columns = torch.arange(seen.shape[-1], device=seen.device)
    some = seen.any(-1)
    lo = torch.where(seen, columns, seen.shape[-1]).amin(-1)
    hi = torch.where(seen, columns, -1).amax(-1) + 1
    lo = torch.where(some, lo + offset, 0)
    hi = torch.where(some, hi + offset, 0)
    return lo.tolist(), hi.tolist()


def plan(allowed: torch.Tensor, width: int) -> list[Window] | None:
    """The windows of a forward whose rows see the keys `allowed` (B, 1, Q, width + E), or None when they
    would save too little (`SAVING`, `cost`) or the forward is not on a CPU (the kernel that returns the
    log-sum-exp is the CPU one; a GPU runs the masked call at full speed)."""
    if allowed.device.type != "cpu" or allowed.shape[-1] == width:
        return None
    groups: dict[tuple[int, int, int, int], tuple[list[int], int]] = {}
    for b in range(allowed.shape[0]):
        seen = allowed[b, 0]
        lo, hi = _bounds(seen[:, :width], 0)
        clo, chi = _bounds(seen[:, width:], width)
        for row, (first, last, copies, copies_end) in enumerate(zip(lo, hi, clo, chi)):
            # the rows of one gap: the same start and copies, each up to itself (the mask keeps it causal)
            rows, end = groups.get((b, first, copies, copies_end), ([], 0))
            groups[(b, first, copies, copies_end)] = ([*rows, row], max(end, last))
    split = sum(cost(len(rows), (hi - lo) + (chi - clo), (hi > lo) + (chi > clo))
                for (_, lo, clo, chi), (rows, hi) in groups.items())
    if split > SAVING * cost(allowed.shape[2], allowed.shape[-1]) * allowed.shape[0]:
        return None
    return [Window(b, torch.tensor(rows, dtype=torch.long), lo, hi, clo, chi)
            for (b, lo, clo, chi), (rows, hi) in groups.items()]


def _part(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False, attn_mask=mask)
    return out, lse


def attend(windows: list[Window], q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
           mask: torch.Tensor) -> torch.Tensor:
    """Attention (B, H, Q, D) of `q` over `k`, `v` (B, H_kv, T, D) with the additive `mask` (B or 1, H or 1,
    Q, T), each window's rows over its keys only."""
    out = q.new_empty(q.shape)
    for w in windows:
        rows = q[w.b : w.b + 1].index_select(2, w.rows)
        mb = min(w.b, mask.shape[0] - 1)  # a mask shared by the batch has one row
        m = mask[mb : mb + 1].index_select(2, w.rows)
        parts = [_part(rows, k[w.b : w.b + 1, :, lo:hi], v[w.b : w.b + 1, :, lo:hi], m[..., lo:hi])
                 for lo, hi in ((w.lo, w.hi), (w.clo, w.chi)) if hi > lo]
        if not parts:  # a row that sees nothing (padding): the masked call would give NaN, keep zeros
            out[w.b : w.b + 1].index_copy_(2, w.rows, torch.zeros_like(rows))
            continue
        if len(parts) == 1:
            joined = parts[0][0]
        else:
            (o1, l1), (o2, l2) = parts
            lse = torch.logaddexp(l1, l2)
            joined = o1 * (l1 - lse).exp()[..., None] + o2 * (l2 - lse).exp()[..., None]
        out[w.b : w.b + 1].index_copy_(2, w.rows, joined.to(q.dtype))
    return out
