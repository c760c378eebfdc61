"""Where a block-diffusion model reads each position of a canvas: its sequence order and its block.

A block-diffusion model reads one sequence left to right in blocks of `size` tokens, counted from the
sequence's start: a block attends to itself (both ways) and to every earlier block. A canvas F0 G1 F1 ...
Gk Fk (fixed text Fi, gaps Gi) becomes that sequence as follows:
- F0 G1 F1 ... Gk in canvas order: each gap is written after the text before it, as the family's own
  generation writes after its prompt (a gap's first block may share a block with the end of that text);
  the text after a gap is read once the gap is written, so the gaps of one canvas are written one after
  the other.
- Fk, the text after the last gap, cannot be read after the gaps (nothing is written after it). When the
  family reads the suffix (`Family.reads_suffix`), Fk is placed first, before F0, as a context block the
  way an earlier document of a packed training sequence is (Fk ends with EOS on every infill canvas, and
  F0 starts with BOS); otherwise (the default, measured: README "Block-diffusion checkpoints") it is not
  read at all. A Fk of end tokens only is never read, so a completion at the end of a file is exactly the
  family's own generation from F0.
- A finished gap (no mask left) is read up to its first end token: its end tokens and what follows them
  are not part of the text the next gap reads.
- The gap being written (the first that holds a mask) is padded with masks up to the end of its last
  block, as the families' own samplers decode whole blocks: they sit in the row's `pads` positions after
  the canvas (`engine.denoise.canvas_batch`), are read right after the gap's last position and before the
  text after it, take part in that block's steps (`engine/families/block_commit.py`) and are dropped once
  the gap holds no mask. So the gap's last block is the one the family's sampler decodes, whatever the gap's
  length, and the text after a gap never shares a block with it.
RoPE positions are the sequence order. `order` is -1 at positions the model never reads (padding, an
unread Fk, a finished gap's tail).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.denoise.seam import LoadedModel
    from engine.params import DenoiseParams


def pad_count(order: torch.Tensor, spans: list[list[int]], masked: torch.Tensor, size: int) -> int:
    """How many masks pad the first gap that holds a mask (`masked`: (L,) of the row) to the end of its last
    block, from the row's sequence `order` (L,) without pads; 0 for a row with no such gap."""
    for start, end in spans:
        if bool(masked[start:end].any()):
            return -(int(order[end - 1]) + 1) % size
    return 0


def pad_gaps(batch: CanvasBatch, layout: BlockLayout) -> bool:
    """Give every live row without pads the masks that pad its first open gap to the end of its last block
    (`layout`: the batch's, as it is); whether any row got some (the layout then changed)."""
    masked = batch.masked
    padded = False
    for b, row in enumerate(batch.rows):
        if row.pads or not batch.is_live(b):
            continue
        count = pad_count(layout.order[b], row.spans, masked[b], layout.size)
        if count:
            at = batch.lengths[b]
            batch.widen(at + count)
            batch.x[b, at : at + count] = batch.mask_id
            row.pads, padded = count, True
    return padded


def pad_masks(batch: CanvasBatch) -> torch.Tensor:
    """(B, L): the pads of every live row that still hold a mask."""
    out = torch.zeros_like(batch.real)
    for b, row in enumerate(batch.rows):
        if row.pads and batch.is_live(b):
            at = batch.lengths[b]
            out[b, at : at + row.pads] = batch.x[b, at : at + row.pads] == batch.mask_id
    return out


def drop_pads(batch: CanvasBatch, x: torch.Tensor, b: int) -> None:
    """Row b's gap is written: its pads leave `x` (its ids from now on) and the row."""
    at, row = batch.lengths[b], batch.rows[b]
    x[b, at : at + row.pads] = batch.pad_id
    row.pads = 0


def block_size(loaded: LoadedModel, params: DenoiseParams) -> int:
    """The checkpoint's block size, or `params.block` under the threshold rule (the reference rule always
    runs the checkpoint's own)."""
    if params.block and params.rule == "threshold":
        return params.block
    return int(loaded.model.shape.block_size)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class BlockLayout:
    order: torch.Tensor  # (B, L) sequence position of each canvas position, -1 where not read
    block: torch.Tensor  # (B, L) order // size, -1 where not read
    size: int

    @classmethod
    def of(cls, batch: CanvasBatch, size: int, end_ids: frozenset[int], reads_suffix: bool) -> BlockLayout:
        n, width = batch.x.shape
        order = torch.full((n, width), -1, dtype=torch.long)
        ids = batch.x.tolist()
        for b, row in enumerate(batch.rows):
            order[b] = row_order(ids[b][: batch.lengths[b]], row.spans, width, batch.mask_id, end_ids, reads_suffix,
                                 row.pads)
        order = order.to(batch.x.device)
        block = torch.where(order >= 0, order // size, -1)
        return cls(order, block, size)

    def current(self, masked: torch.Tensor) -> torch.Tensor:
        """(B,) the first block of each row that holds a mask, -1 for a row with none."""
        big = torch.iinfo(torch.long).max
        first = torch.where(masked & (self.block >= 0), self.block, big).min(-1).values
        return torch.where(first == big, -1, first)

    def upto(self, current: torch.Tensor) -> torch.Tensor:
        """(B, L): the read positions in blocks up to each row's current one (nothing for a done row)."""
        return (self.block >= 0) & (self.block <= current[:, None])

    def previous(self, rows: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """The canvas position just before each of `positions` (of batch `rows`) in sequence order (a pad's
        is not the canvas position before it)."""
        width = self.order.shape[1]
        at = torch.zeros((self.order.shape[0], width + 1), dtype=torch.long, device=self.order.device)
        read = self.order >= 0
        b, pos = read.nonzero(as_tuple=True)
        at[b, self.order[b, pos]] = pos
        return at[rows, (self.order[rows, positions] - 1).clamp(min=0)]

    def attention(self, query: torch.Tensor) -> torch.Tensor:
        """(B, 1, Q, L) bool: which canvas positions each query (canvas positions (B, Q)) attends to."""
        block_q = self.block.gather(1, query)
        return ((self.block[:, None, :] >= 0) & (self.block[:, None, :] <= block_q[:, :, None]))[:, None]


def row_order(ids: list[int], spans: list[list[int]], width: int, mask_id: int, end_ids: frozenset[int],
              reads_suffix: bool, pads: int = 0) -> torch.Tensor:
    """(width,) the sequence order of one canvas (see the module docstring), with its `pads` positions
    (from len(ids) on) read after its first gap that holds a mask."""
    order = torch.full((width,), -1, dtype=torch.long)
    tail_start = spans[-1][1] if spans else len(ids)
    tail = ids[tail_start:]
    next_pos = 0
    if reads_suffix and any(t not in end_ids for t in tail):
        order[tail_start : len(ids)] = torch.arange(len(tail))
        next_pos = len(tail)
    cursor = 0
    for start, end in spans:
        read = [(cursor, start)]
        seg = ids[start:end]
        if mask_id in seg:
            read.append((start, end))
            read.append((len(ids), len(ids) + pads))
            pads = 0
        else:
            cut = next((j for j, t in enumerate(seg) if t in end_ids), len(seg))
            read.append((start, start + cut))
        for a, z in read:
            order[a:z] = torch.arange(next_pos, next_pos + z - a)
            next_pos += z - a
        cursor = end
    return order
