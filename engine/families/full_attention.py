"""Predictions of full-attention families (Dream, LLaDA) inside the denoising loop, with the fixed-text cache.

Rows due a refresh (or every row, without a cache) run in full; the others run as queries only the positions
whose logits are read (the masks, or the position before each mask when logits are shifted), their masks,
and the positions changed last step plus the fixed text `near` them, against their cached K/V; finished
rows do not run. Each row's result depends on that row alone, whatever else is batched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from engine.cache.batch_kv import BatchKV
from engine.cache.doc_cache import DocKV, warm_layers
from engine.denoise.canvas_batch import CanvasBatch, query_positions
from engine.models.layers import ForwardContext
from engine.params import DenoiseParams

if TYPE_CHECKING:
    from engine.denoise.seam import LoadedModel


def sources(masked: torch.Tensor, shifted: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, positions) whose logits predict the masked positions, in `masked.nonzero()` order."""
    rows, pos = masked.nonzero(as_tuple=True)
    return rows, (pos - 1 if shifted else pos)


class FullAttentionPredictor:
    def __init__(self, loaded: LoadedModel, batch: CanvasBatch, params: DenoiseParams) -> None:
        self.loaded = loaded
        self.params = params
        n = batch.x.shape[0]
        self.use_cache = params.cache == "fixed"
        self.kv = BatchKV(len(loaded.model.model.layers), n, batch.x.shape[1], loaded.device)
        self.since_full = torch.zeros(n, dtype=torch.long)
        self.stale = torch.ones(n, dtype=torch.bool)  # rows whose cached K/V must be recomputed in full
        self.rerun = torch.zeros_like(batch.masked)  # positions whose cached K/V are out of date

    def warm(self, warm: DocKV, batch: CanvasBatch, b: int) -> None:
        ids = batch.row_ids(b)
        warmed = warm_layers(warm, ids, self.loaded.special.mask_id, self.loaded.model)
        if warmed is not None:
            layers, edited = warmed
            cached = torch.ones(len(ids), dtype=torch.bool)
            cached[edited[0].cpu()] = False
            self.kv.fit_width(batch.x.shape[1])  # a row that joined may be wider than the batch was
            self.rerun = torch.nn.functional.pad(self.rerun, (0, batch.x.shape[1] - self.rerun.shape[1]))
            self.kv.put_row(b, layers, torch.tensor(ids, device=self.kv.ids.device), cached.to(self.kv.ids.device))
            self.rerun[b, edited[0]] = True
            self.stale[b] = False

    def add_rows(self, n: int) -> None:
        """n rows joined the batch: their first step is a full forward."""
        self.kv.add_rows(n)
        self.since_full = torch.cat([self.since_full, torch.zeros(n, dtype=torch.long)])
        self.stale = torch.cat([self.stale, torch.ones(n, dtype=torch.bool)])
        self.rerun = torch.cat([self.rerun, self.rerun.new_zeros((n, self.rerun.shape[1]))])

    def keep_rows(self, rows: list[int]) -> None:
        self.kv.keep_rows(torch.tensor(rows, dtype=torch.long, device=self.kv.ids.device))
        self.since_full, self.stale = self.since_full[rows], self.stale[rows]
        self.rerun = self.rerun[torch.tensor(rows, dtype=torch.long, device=self.rerun.device)]

    def grew(self, batch: CanvasBatch, b: int, span: int, n: int) -> None:
        """Row b got longer: its cached K/V now sit at the wrong positions."""
        self.stale[b] = True

    def predict(self, batch: CanvasBatch, candidates: torch.Tensor,
                changed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (M, V) for the candidate positions in `candidates.nonzero()` order, positions run per row)."""
        n = batch.x.shape[0]
        params = self.params
        self.kv.fit_width(batch.x.shape[1])
        self.rerun = torch.nn.functional.pad(self.rerun, (0, batch.x.shape[1] - self.rerun.shape[1])) | changed
        active = batch.masked.any(-1).cpu()
        full = self.stale | ~torch.tensor(self.use_cache).expand(n)
        if params.refresh_every:
            full |= self.since_full >= params.refresh_every
        rerun = self.rerun | batch.around_spans(params.near, self.rerun)
        ran = torch.zeros(n, dtype=torch.long)
        logits = self._forward(batch, candidates, full & active, ~full & active, rerun, ran)
        self.since_full = torch.where(full, 1, self.since_full + 1)
        self.stale[:] = False
        self.rerun = torch.zeros_like(self.rerun)
        return logits, ran

    def _forward(self, batch: CanvasBatch, masked: torch.Tensor, full: torch.Tensor, partial: torch.Tensor,
                 rerun: torch.Tensor, ran: torch.Tensor) -> torch.Tensor:
        kv = self.kv if self.use_cache else None
        rows_m, src_m = sources(masked, self.loaded.family.shifted_logits)
        need = masked | rerun
        need[rows_m, src_m] = True
        out: torch.Tensor | None = None
        for group, is_full in ((full.nonzero().flatten(), True), (partial.nonzero().flatten(), False)):
            if group.numel() == 0:
                continue
            group = group.to(batch.x.device)
            x, real = batch.x[group], batch.real[group]
            key_mask = None if bool(real.all()) else real
            local = torch.full((batch.x.shape[0],), -1, dtype=torch.long, device=batch.x.device)
            local[group] = torch.arange(group.numel(), device=group.device)
            pick = local[rows_m] >= 0
            r, src = local[rows_m[pick]], src_m[pick]
            if is_full:
                ran[group.cpu()] += real.sum(-1).cpu()
                ctx = ForwardContext([None] * kv.n_layers, key_mask) if kv is not None else None
                logits = self.loaded.model(x, None, key_mask, ctx, logits_at=(r, src))
                if kv is not None and ctx is not None:
                    kv.store(group, ctx.layers, x)
            else:
                assert kv is not None
                query = query_positions(need[group])
                ran[group.cpu()] += need[group].sum(-1).cpu()
                ctx = ForwardContext(kv.select(group), key_mask, query)
                slot = torch.full_like(x, -1)
                slot.scatter_(1, query, torch.arange(query.shape[1], device=query.device).expand_as(query))
                logits = self.loaded.model(x.gather(1, query), query, key_mask, ctx, logits_at=(r, slot[r, src]))
                kv.update(group, ctx.layers, query, x)
            if out is None:
                out = logits.new_empty((rows_m.numel(), logits.shape[-1]))
            out[pick] = logits
        assert out is not None
        return out

    def keep(self, batch: CanvasBatch, b: int) -> DocKV | None:
        if not self.use_cache or not self.kv.ready:
            return None
        return DocKV(self.kv.ids[b, : batch.lengths[b]].tolist(), self.kv.trimmed(b, batch.lengths[b]))
