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
            order[b] = row_order(ids[b][: batch.lengths[b]], row.spans, width, batch.mask_id, end_ids, reads_suffix)
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

    def attention(self, query: torch.Tensor) -> torch.Tensor:
        """(B, 1, Q, L) bool: which canvas positions each query (canvas positions (B, Q)) attends to."""
        block_q = self.block.gather(1, query)
        return ((self.block[:, None, :] >= 0) & (self.block[:, None, :] <= block_q[:, :, None]))[:, None]


def row_order(ids: list[int], spans: list[list[int]], width: int, mask_id: int, end_ids: frozenset[int],
              reads_suffix: bool) -> torch.Tensor:
    """(width,) the sequence order of one canvas (see the module docstring)."""
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
        else:
            cut = next((j for j, t in enumerate(seg) if t in end_ids), len(seg))
            read.append((start, start + cut))
        for a, z in read:
            order[a:z] = torch.arange(next_pos, next_pos + z - a)
            next_pos += z - a
        cursor = end
    return order
