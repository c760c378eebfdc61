"""Attention of a narrow anchored forward over a multi-gap canvas, on a CPU: the canvas keys in one call,
each gap's right-context copies in another, the gaps as its batch.

A gap row sees the canvas from its start to itself (the fixed text before its gap, other gaps masked)
and its own gap's copies (`anchored.right_view`). With eight gaps in one canvas the copies are eight
stretches of up to 256 keys after the canvas's ~950, and one masked call ran every row over all ~3,000
keys, throwing three quarters away: attention was 43% of such a step. Here every row runs over the canvas
keys alone (one call), and the rows of each gap over that gap's copies: with the copies laid out in slots
of `RightView.slot` keys each, the slots are a strided view of the cache, a batch of (slots, kv heads,
slot, head dim) with no copy, so the second part is also one call. The two parts are joined by their
log-sum-exp.

The split changes the order of the sums, so results agree with one masked call to float rounding, not bit
for bit; a canvas of fewer than `MIN_SLOTS` gaps with right context keeps the one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

MIN_SLOTS = 4
"""The split is used for canvases whose copies fill at least this many slots. Measured in a one-off script
on bench.multispot's canvases (2-core AMX Xeon, float32, the decoding steps of three files, one masked
call against the split in one process): 8 gaps 4.98 s against 4.40 s (a one-row step 40 -> 32 ms), 4 gaps 2.16 against 2.10,
2 gaps 1.55 against 1.65 (slower: the second call and the join cost more than the copies they skip)."""


@dataclass(frozen=True)
class Slots:
    """Batch row `b`'s copies slots [lo, hi) and the query rows `rows` (hi - lo, R) that read each slot,
    padded by repeating a row of the slot (a slot no row reads repeats row 0); `real` (hi - lo, R) marks
    the rows that are not padding, `target` their query indices in `real`'s order."""

    b: int
    lo: int
    hi: int
    rows: torch.Tensor
    real: torch.Tensor
    target: torch.Tensor


@dataclass(frozen=True)
class CopiesPlan:
    """A forward's canvas keys [0, width) and copies slots of `slot` keys after them, read by `parts`."""

    width: int
    slot: int
    parts: list[Slots]


def plan(allowed: torch.Tensor, slot: int, width: int) -> CopiesPlan | None:
    """The slots of a forward whose rows see the keys `allowed` (B, 1, Q, width + E), the copies in slots of
    `slot` keys, or None for fewer than MIN_SLOTS slots or off a CPU (the kernel that returns the
    log-sum-exp is the CPU one; a GPU runs the masked call at full speed)."""
    extra = allowed.shape[-1] - width
    if allowed.device.type != "cpu" or not slot or extra < MIN_SLOTS * slot or extra % slot:
        return None
    batch, _, queries, _ = allowed.shape
    sees = allowed[:, 0, :, width:].reshape(batch, queries, extra // slot, slot).any(-1)  # (B, Q, slots)
    parts: list[Slots] = []
    for b in range(batch):
        read = sees[b].any(0).nonzero().flatten().tolist()
        if not read:
            continue
        lo, hi = read[0], read[-1] + 1
        per_slot = [sees[b, :, s].nonzero().flatten() for s in range(lo, hi)]
        width_r = max(r.numel() for r in per_slot)
        rows = torch.zeros((hi - lo, width_r), dtype=torch.long)
        real = torch.zeros((hi - lo, width_r), dtype=torch.bool)
        for i, r in enumerate(per_slot):
            if r.numel():
                rows[i] = r[0]
                rows[i, : r.numel()], real[i, : r.numel()] = r, True
        parts.append(Slots(b, lo, hi, rows, real, rows[real]))
    return CopiesPlan(width, slot, parts) if parts else None


def _flash(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False, attn_mask=mask)
    return out, lse


def part_masks(copies: CopiesPlan, base: torch.Tensor, right: torch.Tensor | None
               ) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    """Per part, the (slots, 1, R, slot) additive mask of its rows over its slots and the pairs that take the
    right bias (or None), from a forward's (B or 1, 1, Q, width + E) `base` and `right` (`GapAdapt`): the
    same for every layer, so gathered once."""
    def pick(full: torch.Tensor, p: Slots) -> torch.Tensor:
        m = full[min(p.b, full.shape[0] - 1), :, :, copies.width :]
        m = m.reshape(*m.shape[:-1], -1, copies.slot)  # (1, Q, slots, slot)
        return m[:, p.rows, torch.arange(p.lo, p.hi)[:, None]].transpose(0, 1)  # (n, 1, R, slot)

    return [(pick(base, p), None if right is None else pick(right, p)) for p in copies.parts]


def attend(copies: CopiesPlan, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, base: torch.Tensor,
           masks: list[tuple[torch.Tensor, torch.Tensor | None]], bias: torch.Tensor) -> torch.Tensor:
    """Attention (B, H, Q, D) of `q` over `k`, `v` (B, H_kv, width + E, D): over the canvas keys by the
    additive `base` (B or 1, 1, Q, width + E; the right bias only ever falls on copies), over each part's
    slots by its `part_masks` entry, where the right pairs take the per-head `bias` (H,)."""
    width, slot = copies.width, copies.slot
    out, lse = _flash(q, k[:, :, :width], v[:, :, :width], base[..., :width])
    out = out.float()  # the parts are joined in float32 whatever the keys' dtype (`engine.cache.kv_dtype`)
    heads, kv_heads, dim = q.shape[1], k.shape[1], q.shape[3]
    for p, (mask, right) in zip(copies.parts, masks):
        n, r = p.rows.shape
        qx = q[p.b].index_select(1, p.rows.flatten()).view(heads, n, r, dim).transpose(0, 1)
        stop = width + p.hi * slot
        kx = k[p.b, :, width + p.lo * slot : stop].view(kv_heads, n, slot, dim).transpose(0, 1)
        vx = v[p.b, :, width + p.lo * slot : stop].view(kv_heads, n, slot, dim).transpose(0, 1)
        if right is not None:
            mask = mask + right * bias[None, :, None, None]
        ox, lx = _flash(qx, kx, vx, mask)
        ox = ox.transpose(0, 1)[:, p.real]  # (H, rows, D), in `target` order
        lx = lx.transpose(0, 1)[:, p.real]
        o1, l1 = out[p.b].index_select(1, p.target), lse[p.b].index_select(1, p.target)
        joined = torch.logaddexp(l1, lx)
        out[p.b].index_copy_(1, p.target, o1 * (l1 - joined).exp()[..., None] + ox * (lx - joined).exp()[..., None])
    return out
