"""Anchored family: a frozen autoregressive base (Llama layout, causal) plus a small adapter that teaches
mask positions to look ahead and every gap position to read the text after the gap.

A canvas is fixed text and gaps, F0 G1 F1 G2 ... Gk Fk, each gap one span of the canvas: its committed
tokens (always a leading run: this family commits left to right) followed by masks. `layout` numbers the
segments in order (F0 = 0, G1 = 1, F1 = 2, ...) and gives every position its RoPE position. Attention:
- F0 (BOS and the text before the first gap) is causal over itself: the base model, exactly, so its K/V
  are exact and reusable across keystrokes.
- Every later fixed segment is causal over itself only, as if a file started there: its K/V depend on its
  own text alone, so a shifted copy is reused exactly by re-rotation. For a gap after the first, the text
  just before it is therefore read without the text above the gap before it (bench.quality reports
  multi-spot figures for that).
- A gap row (committed or mask) sees every fixed segment before its gap, its own gap's rows up to itself
  (causal: a committed token never sees a mask, and no mask sees a mask after it, so masks past the
  lookahead window never need computing) and every fixed segment after its gap: the right context,
  through copies of its keys re-rotated to sit before the gap (`right_start`, `AnchoredContext`).
  Committed gap rows read the right context through a learned per-layer, per-head attention bias
  (`Adapter.right_bias`; minus infinity with the adapter off), mask rows read it plainly.
- Gap rows (committed or mask) run through the gated LoRA; fixed text never does.
Positions: fixed text and gaps take consecutive positions, except that the fixed text after a gap starts
`gap_room` positions after the gap's start (or right after the gap when it is longer), whatever the gap's
mask count. Gap rows see that text as if it ended `gap_room` positions before the gap: where it sits
does not depend on how many masks the gap has, so the model learns where a span ends from the text.

Logits are shifted (the row at p predicts p + 1), so the first token of a gap comes from the last row of
the text before it: with the adapter off, committing the first mask of each gap per step is exactly the
base's greedy decoding. The mask id is one past the base vocabulary; it has its own input embedding and is
never predicted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from engine.models import copies_apart, segment_attention
from engine.models.layers import (
    ForwardContext,
    LayerKV,
    decoding_attention,
    fused_groups,
    rotary_tables,
    rotated_with,
    sdpa,
)
from engine.models.segment_attention import SegmentPlan
from engine.models.transformer import ModelShape, Transformer

LOGITS_SHIFTED = True
TARGETS: dict[str, Callable[[ModelShape], tuple[int, int]]] = {  # adapted projection -> (input width, output width) as a function of the shape
    "q_proj": lambda s: (s.hidden_size, s.hidden_size),
    "k_proj": lambda s: (s.hidden_size, s.num_key_value_heads * (s.hidden_size // s.num_attention_heads)),
    "v_proj": lambda s: (s.hidden_size, s.num_key_value_heads * (s.hidden_size // s.num_attention_heads)),
    "o_proj": lambda s: (s.hidden_size, s.hidden_size),
    "gate_proj": lambda s: (s.hidden_size, s.intermediate_size),
    "up_proj": lambda s: (s.hidden_size, s.intermediate_size),
    "down_proj": lambda s: (s.intermediate_size, s.hidden_size),
}
CLOSED = -6.0  # initial right-context bias of committed rows: nearly closed, but with a gradient
LOOKAHEAD = 8  # masks per span a step considers: the adapter is trained on mask blocks of 7 (+ the first)


@dataclass(frozen=True)
class AdapterShape:
    """`max_right`: tokens of right context the adapter was trained with (canvases keep at most that)."""

    rank: int = 16
    alpha: float = 32.0
    gap_room: int = 256
    max_right: int = 256

    @property
    def scale(self) -> float:
        return self.alpha / self.rank


class LoRA(nn.Module):
    def __init__(self, d_in: int, d_out: int, rank: int) -> None:
        super().__init__()
        self.A = nn.Parameter(torch.empty(rank, d_in))
        self.B = nn.Parameter(torch.zeros(d_out, rank))
        nn.init.normal_(self.A, std=1 / math.sqrt(d_in))


class Adapter(nn.Module):
    """Everything the family trains: the mask embedding, a LoRA per projection and layer, and the
    right-context bias of committed gap rows. Initialised to change nothing but the mask rows' input."""

    def __init__(self, shape: ModelShape, adapter: AdapterShape) -> None:
        super().__init__()
        self.shape = adapter
        self.mask_embed = nn.Parameter(torch.zeros(shape.hidden_size))
        self.layers = nn.ModuleList(
            nn.ModuleDict({name: LoRA(*size(shape), adapter.rank) for name, size in TARGETS.items()})
            for _ in range(shape.num_hidden_layers)
        )
        self.right_bias = nn.Parameter(torch.full((shape.num_hidden_layers, shape.num_attention_heads), CLOSED))

    def lora(self, layer: int, name: str) -> LoRA:
        """The LoRA of projection `name` in `layer` (`layers` holds `nn.ModuleDict`s of `LoRA`s)."""
        return cast(LoRA, cast(nn.ModuleDict, self.layers[layer])[name])


class GapAdapt:
    """One forward's use of the adapter (`layers.Adapt`): LoRA on the gap rows, and attention by the mask
    `allowed` (B, 1, Q, S) plus, where `right` (B, 1, Q, S) holds, the committed rows' right bias. With a
    `segments` plan (a wide forward: `segment_attention`), fixed text attends by segment on the causal
    kernel and the masks are built for the gap rows alone.

    Rows outside `gap` are untouched, bit for bit (index_add adds to the listed rows only). With
    `enabled` False no LoRA runs and the `right` pairs are closed."""

    def __init__(self, adapter: Adapter, gap: torch.Tensor, allowed: torch.Tensor, right: torch.Tensor | None,
                 enabled: bool = True, segments: SegmentPlan | None = None,
                 copies: copies_apart.CopiesPlan | None = None) -> None:
        self.adapter = adapter
        self.copies = copies
        self.rows = gap.flatten().nonzero().flatten() if enabled else gap.new_zeros(0, dtype=torch.long)
        # a decoding step: every query row is in a gap (with the adapter off too: the products then take the
        # decoding kernel, without the LoRA)
        self.every_row = bool(gap.all())
        self.enabled = enabled
        self.segments = segments
        self._by_layer: dict[int, tuple[tuple[torch.Tensor, ...], torch.Tensor, torch.Tensor]] = {}
        if right is not None and not enabled:
            allowed, right = allowed & ~right, None
        if segments is None:
            self.masks = {-1: self._float_masks(allowed, right)}
            if copies is not None:
                self.copy_masks = copies_apart.part_masks(copies, *self.masks[-1])
        else:
            self.masks = {g.b: self._float_masks(allowed[g.b : g.b + 1].index_select(2, g.rows),
                                                 None if right is None else right[g.b : g.b + 1].index_select(2, g.rows))
                          for g in segments.gaps}

    def _float_masks(self, allowed: torch.Tensor, right: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(additive base mask, the pairs that take the right bias, or None when there are none)."""
        dtype = self.adapter.mask_embed.dtype
        base = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device).masked_fill(~allowed, float("-inf"))
        return base, (right.to(dtype) if right is not None and bool(right.any()) else None)

    def project(self, layer: int, name: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.rows.numel() == 0:
            return y
        lora = self.adapter.lora(layer, name)
        if self.every_row:
            return y + self._delta(lora, x).to(y.dtype)
        delta = self._delta(lora, x.reshape(-1, x.shape[-1]).index_select(0, self.rows))
        return y.reshape(-1, y.shape[-1]).index_add(0, self.rows, delta.to(y.dtype)).view_as(y)

    def _delta(self, lora: LoRA, x: torch.Tensor) -> torch.Tensor:
        return F.linear(F.linear(x, lora.A), lora.B) * self.adapter.shape.scale

    def _mask(self, layer: int, key: int) -> torch.Tensor:
        base, right = self.masks[key]
        if right is None:
            return base
        if self.every_row:
            return self._decoding_mask(layer, key, base, right)
        return base + right * self.adapter.right_bias[layer][None, :, None, None]

    def _decoding_mask(self, layer: int, key: int, base: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        """A decoding step's mask of `layer`, the same values as `_mask`'s general form. Only the columns
        from the first that takes the right bias on (the right context's copies) differ by layer: they are
        computed for every layer in one op, and written per layer into one buffer of the step, where a
        mask per layer of every column wrote 20 MB a step at 16 rows after 1,024 tokens."""
        if key not in self._by_layer:
            start = int(right.flatten(0, -2).any(0).nonzero()[0])
            biased = base[..., start:] + right[..., start:] * self.adapter.right_bias[:, None, :, None, None]
            heads = self.adapter.right_bias.shape[1]
            buffer = base.expand(base.shape[0], heads, *base.shape[2:]).clone()
            # views made once a forward: slicing a tensor a layer cost more than the copy itself
            self._by_layer[key] = (biased.unbind(0), buffer[..., start:], buffer)
        biased_by_layer, tail, buffer = self._by_layer[key]
        tail.copy_(biased_by_layer[layer])
        return buffer

    def attend(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.copies is not None:
            return copies_apart.attend(self.copies, q, k, v, self.masks[-1][0], self.copy_masks,
                                       self.adapter.right_bias[layer])
        if self.segments is None:
            return (decoding_attention if self.every_row else sdpa)(q, k, v, self._mask(layer, -1))
        return segment_attention.attend(self.segments, q, k, v, lambda g: self._mask(layer, g.b))


class AnchoredModel(Transformer):
    """The base stack under its Llama names plus `adapter.*`; `forward` is the shared one, given a
    `ForwardContext` whose `adapt` is a `GapAdapt`."""

    def __init__(self, shape: ModelShape, adapter: AdapterShape) -> None:
        super().__init__(shape)
        self.adapter = Adapter(shape, adapter)
        self.adapter_enabled = True

    def fuse_for_inference(self) -> None:
        """Fuse the base's projections and fold the adapter's LoRA into them (`FusedProjections`)."""
        super().fuse_for_inference()
        scale = self.adapter.shape.scale
        for i, block in enumerate(self.model.blocks()):
            for group in fused_groups(block):
                group.attach_low_rank([self.adapter.lora(i, n).A.detach() for n in group.names],
                                      [self.adapter.lora(i, n).B.detach() for n in group.names], scale)

    @property
    def mask_id(self) -> int:
        return self.shape.vocab_size

    @property
    def input_vocab(self) -> int:
        return self.shape.vocab_size + 1

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        masks = input_ids == self.mask_id
        x: torch.Tensor = self.model.embed_tokens(input_ids.masked_fill(masks, 0))
        if bool(masks.any()):
            x = torch.where(masks[..., None], self.adapter.mask_embed.to(x.dtype), x)
        return x


def right_start(gap_start: int, right_length: int, room: int) -> int:
    """Where gap rows see their right context begin: it ends `room` positions before the gap's first
    position, as if it were text read earlier. A causal base has never attended to keys ahead of its
    query, and RoPE makes such keys look like nothing it knows (opened at once, right context placed
    after the gap costs 9 points of next-token accuracy; placed before it, under 1); text seen earlier
    is what its attention heads copy names from."""
    return gap_start - room - right_length


def layout(length: int, spans: list[tuple[int, int]] | list[list[int]], gap_room: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(positions, segments), each (length,): segment 2i is fixed text Fi, 2i - 1 is gap Gi."""
    positions = torch.empty(length, dtype=torch.long)
    segments = torch.empty(length, dtype=torch.long)
    cursor = pos = 0
    for i, (start, end) in enumerate(spans):
        positions[cursor:start] = torch.arange(pos, pos + start - cursor)
        segments[cursor:start] = 2 * i
        pos += start - cursor
        positions[start:end] = torch.arange(pos, pos + end - start)
        segments[start:end] = 2 * i + 1
        pos += max(gap_room, end - start)
        cursor = end
    positions[cursor:] = torch.arange(pos, pos + length - cursor)
    segments[cursor:] = 2 * len(spans)
    return positions, segments


@dataclass(frozen=True)
class RightView:
    """The keys gap rows read as right context, per row: copies of the keys at canvas positions `index`
    (B, E) (-1: padding), re-rotated by `shift` (B, E) to where `right_start` puts them, each serving the
    gap whose segment number is `gap` (B, E). With `slot` set, gap i's copies fill slot i of `slot`
    entries (padded), so that the copies of every gap can be read as one batch (`copies_apart`)."""

    index: torch.Tensor
    shift: torch.Tensor
    gap: torch.Tensor
    slot: int = 0


def right_view(segments: torch.Tensor, positions: torch.Tensor, room: int, limit: int | None = None) -> RightView:
    """Each gap's right context: the fixed text after it, at most `limit` tokens of it (the adapter's
    `max_right`: it was trained on one stretch of at most that many; with several gaps in a canvas, the
    first one's would otherwise run over every later gap to the end, and every row of every gap would
    attend over all of those copies). On a CPU, where a row has `copies_apart.MIN_SLOTS` gaps or more with
    right context, every gap's copies are padded to `limit` (`RightView.slot`), the layout that reads them
    as one batch."""
    rows: list[list[list[tuple[int, int, int]]]] = []
    for seg, pos in zip(segments.tolist(), positions.tolist()):
        row: list[list[tuple[int, int, int]]] = []
        gaps = sorted({c for c in seg if c >= 0 and c % 2 == 1})
        for g in gaps:
            right = [i for i, c in enumerate(seg) if c > g and c % 2 == 0][:limit]
            if not right:
                continue
            first_gap = seg.index(g)
            start, span = pos[right[0]], pos[right[-1]] + 1 - pos[right[0]]
            delta = right_start(pos[first_gap], span, room) - start
            row.append([(i, delta, g) for i in right])
        rows.append(row)
    slotted = segments.device.type == "cpu" and any(len(row) >= copies_apart.MIN_SLOTS for row in rows)
    slot = limit if limit and slotted else 0
    flat = [[c for copies in row for c in copies + [(-1, 0, -1)] * (slot - len(copies) if slot else 0)]
            for row in rows]
    width = max((len(r) for r in flat), default=0)
    out = torch.full((3, len(flat), width), -1, dtype=torch.long)
    for b, entries in enumerate(flat):
        if entries:
            out[:, b, : len(entries)] = torch.tensor(entries, dtype=torch.long).T
    device = segments.device
    return RightView(out[0].to(device), out[1].to(device), out[2].to(device), slot)


class AnchoredContext(ForwardContext):
    """A `ForwardContext` whose keys are followed by the right-context copies of `view` (`RightView`).

    With a cache (`query_index` given), each layer's cached tensors are (B, H, canvas_width + E, D) and the
    copies live in their last E slots (`engine.cache.anchored_kv`): they are rewritten only when `copies_stale`
    (the layout changed, or this forward recomputed keys they copy), and attention reads the tensors as
    they are. A full forward (no cache, the tests' reference) appends the copies to its keys."""

    def __init__(self, layers: list[LayerKV | None], view: RightView, theta: float, canvas_width: int | None = None,
                 copies_stale: bool = True, **kwargs: Any) -> None:
        super().__init__(layers, **kwargs)
        self.view = view
        self.theta = theta
        self.canvas_width = canvas_width
        self.copies_stale = copies_stale
        self._tables: tuple[torch.Tensor, torch.Tensor] | None = None  # the shifts' rotations, every layer's
        self._run: int | None = None  # where the copies' canvas positions start, when they are one run

    def _copies(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The copies (B, H, E, D) of the canvas keys/values `k`, `v`, keys re-rotated by `view.shift`."""
        index = self.view.index.clamp(min=0)
        if self._tables is None:
            self._tables = rotary_tables(self.view.shift, k.shape[3], self.theta, torch.float32)
            run = index[0, 1:] - index[0, :-1]
            self._run = int(index[0, 0]) if index.shape[0] == 1 and bool((run == 1).all()) else None
        if self._run is not None:  # one gap's copies: a run of canvas positions, sliced (gather costs 8 ms a step)
            end = self._run + index.shape[1]
            keys, values = k[:, :, self._run : end], v[:, :, self._run : end]
        elif k.shape[0] == 1:
            keys, values = k.index_select(2, index[0]), v.index_select(2, index[0])
        else:
            rows = torch.arange(k.shape[0], device=k.device)[:, None]
            keys, values = k[rows, :, index].transpose(1, 2), v[rows, :, index].transpose(1, 2)
        return rotated_with(keys, *self._tables), values

    def keys(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        k, v = super().keys(layer, k, v)
        extra = self.view.index.shape[1]
        if extra == 0:
            return k, v
        if self.query_index is None:
            extra_k, extra_v = self._copies(k, v)
            return torch.cat([k, extra_k], 2), torch.cat([v, extra_v], 2)
        width = self.canvas_width
        assert width is not None and k.shape[2] == width + extra, "the cache has no room for the copies"
        if self.copies_stale:
            k[:, :, width:], v[:, :, width:] = self._copies(k[:, :, :width], v[:, :, :width])
        return k, v


def attention(segments: torch.Tensor, query: torch.Tensor, committed: torch.Tensor,
              view: RightView) -> tuple[torch.Tensor, torch.Tensor]:
    """(allowed, right), each (B, 1, Q, S + E), for queries at canvas positions `query` (B, Q) over the S
    canvas keys then the E right-context copies of `view`, from `segments` (B, S) (-1 on padding) and
    `committed` (B, S): gap positions holding a token. Fixed text is causal within its segment; a gap row
    sees the fixed text before its gap, its own gap's rows up to itself, and (in the copies) the fixed
    text after its gap, through the right bias when it is a committed row."""
    index = torch.arange(segments.shape[1], device=segments.device).expand_as(segments)
    seg_q = segments.gather(1, query)[:, :, None]
    seg_k = segments[:, None, :]
    gap_q = seg_q % 2 == 1
    own = (seg_k == seg_q) & (index[:, None, :] <= query[:, :, None])
    left = gap_q & (seg_k >= 0) & (seg_k % 2 == 0) & (seg_k < seg_q)
    copies = gap_q & (view.gap[:, None, :] == seg_q) & (view.index[:, None, :] >= 0)
    allowed = torch.cat([own | left, copies], 2)
    right = torch.cat([torch.zeros_like(own), copies & committed.gather(1, query)[:, :, None]], 2)
    return allowed[:, None], right[:, None]


def forward_canvas(model: AnchoredModel, ids: list[int], spans: list[tuple[int, int]]) -> torch.Tensor:
    """Logits (L, V) of every position of one canvas, computed from scratch (tests' reference)."""
    x = torch.tensor([ids])
    positions, segments = layout(len(ids), spans, model.adapter.shape.gap_room)
    positions, segments = positions[None], segments[None]
    gap = (segments % 2 == 1)
    view = right_view(segments, positions, model.adapter.shape.gap_room, model.adapter.shape.max_right)
    allowed, right = attention(segments, torch.arange(len(ids))[None], gap & (x != model.mask_id), view)
    ctx = AnchoredContext([None] * len(model.model.layers), view, model.shape.rope_theta,
                          adapt=GapAdapt(model.adapter, gap, allowed, right))
    logits: torch.Tensor = model(x, positions, None, ctx)[0]
    return logits
