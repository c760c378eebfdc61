"""The packed training forward of the anchored adapter: one example = one file window and many gaps.

Literal training (one canvas per gap, full forward and backward) wastes most of a CPU on text whose states
never change: the prefix and the right context run through the frozen base, which no gradient reaches.
So an example runs in three parts:
1. the window, causal, through the base without gradients: every gap's prefix K/V is a prefix of it;
2. each gap's right context (+ end-of-text), causal over itself, through the base without gradients,
   at positions 0.., then re-rotated to where gap rows see it (`anchored.right_start`: ending `gap_room`
   positions before the gap);
3. with gradients, only the gap rows of all gaps at once: each gap's middle as committed rows
   (teacher forcing: row i predicts middle token i + 1, the last row end-of-text) and a few mask blocks
   (k committed rows, then masks at offsets k.. predicting the tokens after them), attending to a prefix
   of (1), their own gap's (2) and their own gap's rows, as `anchored.attention` prescribes.
`tests/test_training.py` checks that (3) gives the same logits as the engine's forward on the literal
canvas.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from engine.models.anchored import AnchoredModel, right_start
from engine.models.layers import ForwardContext, LayerKV, apply_rotary, rotary_tables
from training.gaps import Gap
from training.row_attention import Causal, GapSlice, RowAttention, RowKeys, block_causal

IGNORE = -100


@dataclass
class Rows:
    ids: list[int]
    positions: list[int]
    targets: list[int]
    gap: list[int]  # gap index of the row
    block: list[int]  # 0: committed row; j > 0: mask block j of its gap
    offset: list[int]  # offset of the row inside its gap
    block_k: list[int]  # committed rows a mask block sees (0 for committed rows)


def build_rows(window: np.ndarray, gaps: list[Gap], mask_id: int, eos_id: int, mask_blocks: int, block_masks: int,
               rng: random.Random) -> Rows:
    rows = Rows([], [], [], [], [], [], [])
    for g, gap in enumerate(gaps):
        middle = [int(t) for t in window[gap.a : gap.b]]
        targets = middle[1:] + [eos_id]  # what row i (input middle[i]) predicts
        length = len(middle)
        for i, token in enumerate(middle):
            _add(rows, token, gap.a + i, targets[i], g, 0, i, 0)
        for j in range(1, mask_blocks + 1):
            k = max(0, length - rng.randint(1, block_masks)) if gap.at_end else rng.randrange(0, length)
            for i in range(k, min(k + block_masks, length)):
                _add(rows, mask_id, gap.a + i, targets[i], g, j, i, k)
    return rows


def _add(rows: Rows, token: int, position: int, target: int, gap: int, block: int, offset: int, k: int) -> None:
    rows.ids.append(token)
    rows.positions.append(position)
    rows.targets.append(target)
    rows.gap.append(gap)
    rows.block.append(block)
    rows.offset.append(offset)
    rows.block_k.append(k)


def fixed_kv(model: AnchoredModel, window: np.ndarray, rights: list[np.ndarray], eos_id: int) -> tuple[list[LayerKV], list[int]]:
    """Each layer's K/V (no gradients) of the window (causal, positions 0..) followed by every right
    context + end-of-text (each causal over itself, positions 0.., all in one forward); and the rights'
    lengths."""
    device = model.lm_head.weight.device
    layers = model.shape.num_hidden_layers
    window_ctx = ForwardContext([None] * layers, adapt=Causal())
    parts = [np.append(r, eos_id) for r in rights]
    lengths = [len(p) for p in parts]
    right_ctx = ForwardContext([None] * layers, attn_mask=block_causal(lengths, device))
    with torch.no_grad():
        run_layers(model, torch.tensor(np.asarray(window)[None], dtype=torch.long, device=device),
                   torch.arange(len(window), device=device)[None], window_ctx)
        run_layers(model, torch.tensor(np.concatenate(parts)[None], dtype=torch.long, device=device),
                   torch.cat([torch.arange(n, device=device) for n in lengths])[None], right_ctx)
    out = []
    for w, r in zip(window_ctx.layers, right_ctx.layers):
        assert w is not None and r is not None
        out.append(LayerKV(torch.cat([w.k, r.k], 2), torch.cat([w.v, r.v], 2)))
    return out, lengths


def run_layers(model: AnchoredModel, ids: torch.Tensor, positions: torch.Tensor, ctx: ForwardContext) -> torch.Tensor:
    x = model.embed(ids)
    rope = rotary_tables(positions, model.head_dim, model.shape.rope_theta, x.dtype)
    for i, layer in enumerate(model.model.layers):
        x = layer(x, rope, None, ctx, i)
    return x


def _rotated(k: torch.Tensor, delta: int, model: AnchoredModel) -> torch.Tensor:
    pos = torch.full((1, k.shape[2]), delta, device=k.device)
    cos, sin = rotary_tables(pos, model.head_dim, model.shape.rope_theta, k.dtype)
    return apply_rotary(k, cos, sin)


def packed_logits(model: AnchoredModel, window: np.ndarray, gaps: list[Gap], rows: Rows, eos_id: int,
                  enabled: bool = True) -> torch.Tensor:
    """Logits (R, V) of every row; gradients reach the adapter only. `enabled` False: the base alone."""
    device = model.lm_head.weight.device
    room = model.adapter.shape.gap_room
    w = len(window)
    distinct: dict[int, int] = {}  # gaps ending at the same token share one right context
    for gap in gaps:
        distinct.setdefault(id(gap.right), len(distinct))
    rights = {key: gap.right for gap in gaps for key in [id(gap.right)]}
    computed, lengths = fixed_kv(model, window, [rights[key] for key in distinct], eos_id)
    starts = np.cumsum([w] + lengths)
    slices, fixed_k, fixed_v, offset = [], [[] for _ in computed], [[] for _ in computed], 0
    bounds = _row_bounds(rows, len(gaps))
    for g, gap in enumerate(gaps):
        j = distinct[id(gap.right)]
        s0, length = int(starts[j]), lengths[j]
        delta = right_start(gap.a, length, room)
        for i, layer in enumerate(computed):
            fixed_k[i].append(_rotated(layer.k[:, :, s0 : s0 + length], delta, model))
            fixed_v[i].append(layer.v[:, :, s0 : s0 + length])
        r0, r1 = bounds[g]
        slices.append(GapSlice((r0, r1), gap.a, (offset, offset + length), _among(rows, r0, r1),
                               torch.tensor([b == 0 for b in rows.block[r0:r1]])))
        offset += length
    fixed = [LayerKV(torch.cat([layer.k[:, :, :w]] + ks, 2), torch.cat([layer.v[:, :, :w]] + vs, 2))
             for layer, ks, vs in zip(computed, fixed_k, fixed_v)]
    adapt = RowAttention(model.adapter, slices, fixed, w, enabled)
    ids = torch.tensor([rows.ids], device=device)
    x = run_layers(model, ids, torch.tensor([rows.positions], device=device),
                   RowKeys(model.shape.num_hidden_layers, adapt))
    return model.lm_head(model.model.norm(x[0]))


def _row_bounds(rows: Rows, n_gaps: int) -> list[tuple[int, int]]:
    """Each gap's rows as a range (build_rows writes them gap by gap)."""
    gap = np.asarray(rows.gap)
    assert np.all(np.diff(gap) >= 0), "rows must be grouped by gap"
    firsts = np.searchsorted(gap, np.arange(n_gaps + 1))
    return [(int(firsts[g]), int(firsts[g + 1])) for g in range(n_gaps)]


def _among(rows: Rows, r0: int, r1: int) -> torch.Tensor:
    """Which of its gap's rows each row sees: a committed row the committed rows up to itself; a mask
    block row its block's k committed rows and its own block's rows up to itself (`anchored.attention`)."""
    block = torch.tensor(rows.block[r0:r1])
    offset, k = torch.tensor(rows.offset[r0:r1]), torch.tensor(rows.block_k[r0:r1])
    before = offset[None, :] <= offset[:, None]
    committed_key = block[None, :] == 0
    committed_seen = torch.where(block[:, None] == 0, before, offset[None, :] < k[:, None])
    own_block = (block[None, :] == block[:, None]) & (block[:, None] > 0) & before
    return (committed_key & committed_seen) | own_block


def loss_of(logits: torch.Tensor, rows: Rows) -> tuple[torch.Tensor, dict[str, float]]:
    targets = torch.tensor(rows.targets, device=logits.device)
    ce = F.cross_entropy(logits.float(), targets, ignore_index=IGNORE, reduction="none")
    block = torch.tensor(rows.block, device=logits.device)
    committed = block == 0
    ce_detached = ce.detach()
    stats = {
        "ce_committed": float(ce_detached[committed].mean()) if bool(committed.any()) else 0.0,
        "ce_mask": float(ce_detached[~committed].mean()) if bool((~committed).any()) else 0.0,
        "rows": float(len(rows.ids)),
    }
    return ce.mean(), stats
