"""Predictions of the block-diffusion families (SDAR, Fast-dLLM v2, LLaDA2.x) inside the denoising loop.

The model reads each canvas as one sequence in blocks (`engine/families/block_layout.py`): a block attends to itself
and to every earlier block, never to a later one. So a block's keys and values depend only on the blocks up
to it, and once those hold no mask they are final: the predictor caches them exactly and never computes
them again, as an autoregressive model caches its prefix. Each step runs as queries
- every read position of the row's current block (the first block that holds a mask): the block reads
  itself both ways, so all of it changes as its masks are written;
- the blocks before it whose keys and values are not cached yet: the prefill of the fixed text on the
  first step, and a block the step before completed (their keys are computed in the same forward that
  denoises the next block, so completing a block costs no forward of its own);
- the row whose logits are read for each candidate (the candidate itself, or the position before it
  when logits are shifted).
`cache="none"` runs every read position up to the current block every step instead (the official samplers
without a cache; tests' oracle and bench.speed's baseline): the same tokens.

Across requests (`DocKV`), the complete blocks at the start of the sequence that equal those of the
document's last request keep their keys and values (same tokens, same positions: exactly the same).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from engine.cache.batch_kv import BatchKV
from engine.cache.doc_cache import DocKV
from engine.denoise.canvas_batch import CanvasBatch, query_positions
from engine.families.anchored_step import by_width
from engine.families.block_layout import BlockLayout, block_size
from engine.models.layers import ForwardContext, LayerKV
from engine.params import DenoiseParams

if TYPE_CHECKING:
    from engine.denoise.seam import LoadedModel


class BlockPredictor:
    def __init__(self, loaded: LoadedModel, batch: CanvasBatch, params: DenoiseParams) -> None:
        self.loaded = loaded
        self.model = loaded.model
        self.size = block_size(loaded, params)
        self.reads_suffix = loaded.family.reads_suffix
        self.end_ids = loaded.special.end_ids
        self.use_cache = params.cache == "fixed"
        self.kv = BatchKV(len(self.model.model.layers), batch.x.shape[0], batch.x.shape[1], loaded.device)
        n, width = batch.x.shape
        shape = (n, self.model.shape.num_key_value_heads, width, self.model.head_dim)
        dtype = self.model.lm_head.weight.dtype
        self.kv.layers = [LayerKV(torch.zeros(shape, dtype=dtype, device=loaded.device),
                                  torch.zeros(shape, dtype=dtype, device=loaded.device)) for _ in range(self.kv.n_layers)]
        self.final = torch.zeros((n, width), dtype=torch.bool, device=loaded.device)  # cached, exact K/V

    def layout(self, batch: CanvasBatch) -> BlockLayout:
        return BlockLayout.of(batch, self.size, self.end_ids, self.reads_suffix)

    def add_rows(self, n: int) -> None:
        self.kv.add_rows(n)
        self.final = torch.cat([self.final, self.final.new_zeros((n, self.final.shape[1]))])

    def keep_rows(self, rows: list[int]) -> None:
        picked = torch.tensor(rows, dtype=torch.long, device=self.final.device)
        self.kv.keep_rows(picked)
        self.final = self.final[picked]

    def _fit(self, width: int) -> None:
        self.kv.fit_width(width)
        extra = width - self.final.shape[1]
        self.final = torch.nn.functional.pad(self.final, (0, extra)) if extra > 0 else self.final[:, :width]

    def grew(self, batch: CanvasBatch, b: int, span: int, n: int) -> None:
        """n masks were inserted at the end of span `span` of row b: the cached slots after them move with
        their text, and nothing at or after the insertion's block in sequence order stays final."""
        self._fit(batch.x.shape[1])
        at = batch.rows[b].spans[span][1] - n
        for layer in self.kv.layers:
            assert layer is not None
            for t in (layer.k, layer.v):
                t[b, :, at + n :] = t[b, :, at : t.shape[2] - n].clone()
        self.final[b, at + n :] = self.final[b, at : self.final.shape[1] - n].clone()
        self.final[b, at : at + n] = False
        layout = self.layout(batch)
        moved = layout.block[b] >= int(layout.block[b, at])
        self.final[b] &= ~moved

    def predict(self, batch: CanvasBatch, targets: torch.Tensor,
                changed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self._fit(batch.x.shape[1])
        layout = self.layout(batch)
        current = layout.current(batch.masked)
        need = layout.upto(current)
        if self.use_cache:
            need &= ~self.final
        rows_t, pos_t = targets.nonzero(as_tuple=True)
        src = layout.previous(rows_t, pos_t) if self.loaded.family.shifted_logits else pos_t
        need[rows_t, src] = True
        if batch.live is not None:
            need &= batch.live[:, None]
        out: torch.Tensor | None = None
        for group in by_width(need):
            pick = torch.isin(rows_t, group)
            logits = self._forward(batch, layout, group, need, rows_t[pick], src[pick])
            if out is None:
                out = logits.new_empty((rows_t.numel(), logits.shape[-1]))
            out[pick] = logits
        assert out is not None
        if self.use_cache:
            self.final |= need & (layout.block >= 0) & (layout.block < current[:, None])
        return out, need.sum(-1).cpu()

    def _forward(self, batch: CanvasBatch, layout: BlockLayout, group: torch.Tensor, need: torch.Tensor,
                 rows: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        """One forward over the rows in `group`, their `need` positions as queries; the logits at `src`
        of the batch rows `rows`."""
        local = torch.full((batch.x.shape[0],), -1, dtype=torch.long, device=batch.x.device)
        local[group] = torch.arange(group.numel(), device=group.device)
        x = batch.x[group]
        query = query_positions(need[group])
        sub = BlockLayout(layout.order[group], layout.block[group], layout.size)
        ctx = ForwardContext(self.kv.select(group), query_index=query, attn_mask=sub.attention(query))
        slot = torch.full_like(x, -1)
        slot.scatter_(1, query, torch.arange(query.shape[1], device=query.device).expand_as(query))
        r = local[rows]
        positions = sub.order.clamp(min=0).gather(1, query)
        logits: torch.Tensor = self.model(x.gather(1, query), positions, None, ctx, logits_at=(r, slot[r, src]))
        self.kv.update(group, ctx.layers, query, x)
        return logits

    def warm(self, old: DocKV, batch: CanvasBatch, b: int) -> None:
        """Reuse the complete blocks at the start of row b's sequence that equal the last request's."""
        if old.block != self.size or not old.layers:
            return
        self._fit(batch.x.shape[1])  # a row that joined may be wider than the batch was
        layout = self.layout(batch)
        order = layout.order[b]
        read = (order >= 0).nonzero().flatten()
        sequence = read[order[read].argsort()]  # canvas positions in sequence order
        ids = batch.x[b, sequence].tolist()
        same = 0
        limit = min(len(ids), len(old.ids))
        while same < limit and ids[same] == old.ids[same] and ids[same] != batch.mask_id:
            same += 1
        reuse = same // self.size * self.size
        if not reuse:
            return
        where = sequence[:reuse]
        for own, cached in zip(self.kv.layers, old.layers):
            assert own is not None
            own.k[b, :, where] = cached.k[0, :, :reuse]
            own.v[b, :, where] = cached.v[0, :, :reuse]
        self.final[b, where] = True

    def keep(self, batch: CanvasBatch, b: int) -> DocKV | None:
        """Row b's final keys and values in sequence order (a prefix of whole blocks)."""
        if not self.use_cache:
            return None
        layout = self.layout(batch)
        order = layout.order[b]
        final = (self.final[b] & (order >= 0)).nonzero().flatten()
        sequence = final[order[final].argsort()]
        if sequence.numel() == 0:
            return None
        layers = [LayerKV(layer.k[b : b + 1, :, sequence], layer.v[b : b + 1, :, sequence])
                  for layer in self.kv.layers if layer is not None]
        return DocKV(batch.x[b, sequence].tolist(), layers, block=self.size)
