"""The training forward's own attention: the base's fixed text in one block-causal pass, then every gap's
rows against exactly the keys they may see.

The engine's decoding attention (`engine.models.layers.decoding_attention`) gives each row the bits it gets
alone, which training does not need and which costs it dearly: it reads every key for every row (a row of
a gap 20 tokens into a 512-token window attends over all the window's rights and all gaps' rows, masked), and on
a CPU whose matrix library rounds rows apart it runs every row as its own batch entry (over 24 GB for one
window on a Zen 4). Its per-layer mask is one slice of a stack of every layer's masks, whose backward writes
a zero gradient of the whole stack once per layer (42 % of a training step, profiled).

Here a gap's rows (contiguous in `packed.Rows`) attend, one call per gap (`_products`), over the window's
first `a` keys, their own right context's keys and their own gap's rows, by a small mask of their own.
The committed rows' right bias (`Adapter.right_bias`, per layer and head) rides in one extra query/key
column: the queries of committed rows carry the layer's bias per head, the right context's keys carry
1/scale, every other entry 0, so the scores gain exactly `bias` on (committed row, right key) pairs and the
gradient reaches the bias through the query.
Memory per layer is then each gap's rows times its own keys, not all rows times all keys
(`tests/test_training.py` checks that twice the gaps keep twice the activations for the backward).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from engine.models.anchored import Adapter
from engine.models.layers import ForwardContext, LayerKV


@dataclass(frozen=True)
class GapSlice:
    """One gap's rows `rows` (a range of the row pass), its prefix length `a` (window keys 0..a-1), its
    right context's keys `right` (a range of the fixed keys after the window), and its float mask over
    [prefix, right, rows] restricted to the among-rows part (R_g, R_g)."""

    rows: tuple[int, int]
    a: int
    right: tuple[int, int]
    among: torch.Tensor  # bool (R_g, R_g): which of its own gap's rows a row sees
    committed: torch.Tensor  # bool (R_g,): committed rows (they read the right context through the bias)


class Causal:
    """The `engine.models.layers.Adapt` of the base alone over one text, causal (the fused kernel skips
    the keys a causal query never sees, where a mask would only hide them)."""

    rows = torch.zeros(0, dtype=torch.long)
    every_row = False

    def project(self, layer: int, name: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return y

    def attend(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=k.shape[1] != q.shape[1])


def block_causal(lengths: list[int], device: torch.device) -> torch.Tensor:
    """(1, 1, T, T) boolean mask: causal within each consecutive segment of `lengths`, nothing across."""
    seg = torch.repeat_interleave(torch.arange(len(lengths), device=device), torch.tensor(lengths, device=device))
    index = torch.arange(len(seg), device=device)
    return ((seg[:, None] == seg[None, :]) & (index[None, :] <= index[:, None]))[None, None]


class RowAttention:
    """The `engine.models.layers.Adapt` of the row pass: LoRA on every row, attention gap by gap.

    `fixed` holds each layer's window keys (first `window` of them) and right-context keys after them,
    already rotated to where each gap sees them."""

    def __init__(self, adapter: Adapter, gaps: list[GapSlice], fixed: list[LayerKV], window: int,
                 enabled: bool = True) -> None:
        self.adapter = adapter
        self.gaps = gaps
        self.fixed = fixed
        self.window = window
        self.enabled = enabled
        n = gaps[-1].rows[1] if gaps else 0
        self.rows = torch.arange(n) if enabled else torch.zeros(0, dtype=torch.long)
        self.every_row = enabled
        self._masks: dict[torch.dtype, list[torch.Tensor]] = {}

    def project(self, layer: int, name: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if not self.enabled:
            return y
        lora = self.adapter.lora(layer, name)
        return y + F.linear(F.linear(x, lora.A), lora.B) * self.adapter.shape.scale

    def _gap_masks(self, dtype: torch.dtype, device: torch.device) -> list[torch.Tensor]:
        """Per gap, the additive mask (1, 1, R_g, a + L + R_g): prefix and right open, rows by `among`.
        With the adapter off, committed rows do not see the right context at all."""
        if dtype not in self._masks:
            masks = []
            for g in self.gaps:
                r = g.rows[1] - g.rows[0]
                right = g.right[1] - g.right[0]
                open_right = torch.ones(r, right, dtype=torch.bool, device=device)
                if not self.enabled:
                    open_right &= ~g.committed.to(device)[:, None]
                allowed = torch.cat([torch.ones(r, g.a, dtype=torch.bool, device=device), open_right,
                                     g.among.to(device)], 1)
                masks.append(torch.zeros(allowed.shape, dtype=dtype, device=device)
                             .masked_fill(~allowed, float("-inf"))[None, None])
            self._masks[dtype] = masks
        return self._masks[dtype]

    def attend(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """q (1, H, R, D) of the rows; k, v (1, H_kv, R, D) of the same rows (`RowKeys` keeps them apart
        from the fixed keys)."""
        d = q.shape[3]
        scale = d**-0.5
        fixed = self.fixed[layer]
        masks = self._gap_masks(q.dtype, q.device)
        bias = self.adapter.right_bias[layer].to(q.dtype) if self.enabled else None
        sizes = [g.rows[1] - g.rows[0] for g in self.gaps]
        outs = []
        # one split per tensor: slicing each gap apart would give every gap's backward a zero gradient of
        # all rows to write its slice into
        for g, mask, query, own_k, own_v in zip(self.gaps, masks, q.split(sizes, 2), k.split(sizes, 2),
                                                 v.split(sizes, 2)):
            s0, s1 = self.window + g.right[0], self.window + g.right[1]
            keys = torch.cat([fixed.k[:, :, : g.a], fixed.k[:, :, s0:s1], own_k], 2)
            values = torch.cat([fixed.v[:, :, : g.a], fixed.v[:, :, s0:s1], own_v], 2)
            if bias is not None:
                column = (bias[:, None] * g.committed.to(device=q.device, dtype=q.dtype)[None, :])[None, :, :, None]
                marks = torch.zeros(keys.shape[2], dtype=q.dtype, device=q.device)
                marks[g.a : g.a + s1 - s0] = 1 / scale
                query = torch.cat([query, column], 3)
                keys = torch.cat([keys, marks[None, None, :, None].expand(1, keys.shape[1], -1, 1)], 3)
            outs.append(_products(query, keys, values, mask, scale))
        return torch.cat(outs, 2)


def _products(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, the query heads of each key head stacked as the rows of one product
    (`v` may be narrower than `q` and `k`). At a gap's sizes (tens of rows, hundreds of keys) two products
    and a softmax in bfloat16 ran faster than the fused kernel (bfloat16 or float32) on the AMX Xeon."""
    b, h, rows, d = q.shape
    groups = h // k.shape[1]
    stacked = (q * scale).reshape(b, k.shape[1], groups * rows, d)
    scores = torch.matmul(stacked, k.transpose(-1, -2)).view(b, h, rows, -1) + mask
    weights = scores.softmax(-1).view(b, k.shape[1], groups * rows, -1)
    return torch.matmul(weights, v).view(b, h, rows, v.shape[-1])


class RowKeys(ForwardContext):
    """The row pass's context: a layer's keys are the rows' own (the fixed keys are read by `RowAttention`)."""

    def __init__(self, layers: int, adapt: RowAttention) -> None:
        super().__init__([None] * layers, adapt=adapt)

    def keys(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return k, v
