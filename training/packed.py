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

from engine.models.anchored import AnchoredModel, GapAdapt, right_start
from engine.models.layers import ForwardContext, LayerKV, apply_rotary, rotary_tables
from training.gaps import Gap

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
            k = rng.randrange(0, length)
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


class ConcatContext(ForwardContext):
    """Keys = fixed K/V handed in (window and right contexts) followed by the queries' own."""

    def __init__(self, fixed: list[LayerKV], adapt: GapAdapt) -> None:
        super().__init__([None] * len(fixed), adapt=adapt)
        self.fixed = fixed

    def keys(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.cat([self.fixed[layer].k, k], 2), torch.cat([self.fixed[layer].v, v], 2)


def causal_kv(model: AnchoredModel, ids: torch.Tensor, positions: torch.Tensor) -> list[LayerKV]:
    """K/V of a causal base forward over ids (1, T) (no adapter, no gradients)."""
    t = ids.shape[1]
    causal = torch.ones(t, t, dtype=torch.bool, device=ids.device).tril()[None, None]
    adapt = GapAdapt(model.adapter, torch.zeros_like(ids, dtype=torch.bool), causal, None)
    ctx = ForwardContext([None] * model.shape.num_hidden_layers, adapt=adapt)
    with torch.no_grad():
        run_layers(model, ids, positions, ctx)
    return [layer for layer in ctx.layers if layer is not None]


def run_layers(model: AnchoredModel, ids: torch.Tensor, positions: torch.Tensor, ctx: ForwardContext) -> torch.Tensor:
    x = model.embed(ids)
    rope = rotary_tables(positions, model.head_dim, model.shape.rope_theta, x.dtype)
    for i, layer in enumerate(model.model.layers):
        x = layer(x, rope, None, ctx, i)
    return x


def shifted(layer: LayerKV, delta: int, model: AnchoredModel) -> LayerKV:
    pos = torch.full((1, layer.k.shape[2]), delta, device=layer.k.device)
    cos, sin = rotary_tables(pos, model.head_dim, model.shape.rope_theta, layer.k.dtype)
    return LayerKV(apply_rotary(layer.k, cos, sin), layer.v)


def packed_logits(model: AnchoredModel, window: np.ndarray, gaps: list[Gap], rows: Rows, eos_id: int,
                  enabled: bool = True) -> torch.Tensor:
    """Logits (R, V) of every row; gradients reach the adapter only. `enabled` False: the base alone."""
    device = model.lm_head.weight.device
    room = model.adapter.shape.gap_room
    w = len(window)
    prefix = causal_kv(model, torch.tensor(window[None], dtype=torch.long, device=device),
                       torch.arange(w, device=device)[None])
    rights = []
    computed: dict[int, list[LayerKV]] = {}  # gaps ending at the same token share one right context
    for gap in gaps:
        if id(gap.right) not in computed:
            ids = torch.tensor(np.append(gap.right, eos_id)[None], dtype=torch.long, device=device)
            computed[id(gap.right)] = causal_kv(model, ids, torch.arange(ids.shape[1], device=device)[None])
        length = len(gap.right) + 1
        rights.append([shifted(layer, right_start(gap.a, length, room), model) for layer in computed[id(gap.right)]])
    fixed = [LayerKV(torch.cat([prefix[i].k] + [r[i].k for r in rights], 2),
                     torch.cat([prefix[i].v] + [r[i].v for r in rights], 2)) for i in range(len(prefix))]
    allowed, right = row_masks(gaps, rows, w, [len(g.right) + 1 for g in gaps], device)
    ids = torch.tensor([rows.ids], device=device)
    committed = torch.tensor([[b == 0 for b in rows.block]], device=device)
    adapt = GapAdapt(model.adapter, torch.ones_like(ids, dtype=torch.bool), allowed, right & committed[:, None, :, None],
                     enabled)
    x = run_layers(model, ids, torch.tensor([rows.positions], device=device), ConcatContext(fixed, adapt))
    return model.lm_head(model.model.norm(x[0]))


def row_masks(gaps: list[Gap], rows: Rows, width: int, right_lengths: list[int], device) -> tuple[torch.Tensor, torch.Tensor]:
    """(allowed, right), (1, 1, R, width + sum(right_lengths) + R)."""
    gap = torch.tensor(rows.gap)
    block, offset, k = torch.tensor(rows.block), torch.tensor(rows.offset), torch.tensor(rows.block_k)
    starts = torch.tensor([g.a for g in gaps])
    n = len(rows.ids)
    prefix = torch.arange(width)[None, :] < starts[gap][:, None]
    bounds = np.cumsum([0] + right_lengths)
    right_gap = torch.empty(int(bounds[-1]), dtype=torch.long)
    for g in range(len(gaps)):
        right_gap[int(bounds[g]) : int(bounds[g + 1])] = g
    right = right_gap[None, :] == gap[:, None]
    same = gap[:, None] == gap[None, :]
    before = offset[None, :] <= offset[:, None]
    committed_key = block[None, :] == 0
    committed_seen = torch.where(block[:, None] == 0, before, offset[None, :] < k[:, None])
    own_block = (block[None, :] == block[:, None]) & (block[:, None] > 0) & before
    among = same & ((committed_key & committed_seen) | own_block)
    allowed = torch.cat([prefix, right, among], 1)
    right_full = torch.cat([torch.zeros_like(prefix), right, torch.zeros(n, n, dtype=torch.bool)], 1)
    return allowed[None, None].to(device), right_full[None, None].to(device)


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
