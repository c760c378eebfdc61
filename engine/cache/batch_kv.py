"""Per-row cached keys/values of a batch being denoised, with the ids each position was computed from.

Rows are refreshed independently (a row's refresh never touches another row's cache), so a canvas gets
the same tokens whatever it is batched with.
"""

from __future__ import annotations

import torch

from engine.models.layers import LayerKV


class BatchKV:
    def __init__(self, n_layers: int, rows: int, width: int, device: torch.device) -> None:
        self.n_layers = n_layers
        self.layers: list[LayerKV | None] = [None] * n_layers
        self.ids = torch.full((rows, width), -1, dtype=torch.long, device=device)

    @property
    def ready(self) -> bool:
        return self.layers[0] is not None

    def store(self, rows: torch.Tensor, computed: list[LayerKV | None], x: torch.Tensor) -> None:
        """Keep the K/V of a full forward over `rows`."""
        if self.layers[0] is None and rows.numel() == self.ids.shape[0]:
            self.layers = list(computed)
        else:
            for i, layer in enumerate(computed):
                assert layer is not None
                self._ensure(i, layer)
                own = self.layers[i]
                assert own is not None
                own.k[rows] = layer.k
                own.v[rows] = layer.v
        self.ids[rows] = x

    def _ensure(self, i: int, like: LayerKV) -> None:
        if self.layers[i] is None:
            shape = (self.ids.shape[0], like.k.shape[1], self.ids.shape[1], like.k.shape[3])
            self.layers[i] = LayerKV(like.k.new_zeros(shape), like.v.new_zeros(shape))

    def put_row(self, b: int, layers: list[LayerKV | None], ids: torch.Tensor, cached: torch.Tensor) -> None:
        """Row b's K/V from `layers` (one row each, as wide as the row's canvas `ids`), of which the positions
        `cached` (a bool per position) count as computed from their ids."""
        length = ids.shape[0]
        for i, layer in enumerate(layers):
            assert layer is not None
            self._ensure(i, layer)
            own = self.layers[i]
            assert own is not None
            own.k[b, :, :length] = layer.k[0]
            own.v[b, :, :length] = layer.v[0]
        self.ids[b, :length] = torch.where(cached, ids, -1)

    def select(self, rows: torch.Tensor) -> list[LayerKV | None]:
        if rows.numel() == self.ids.shape[0]:
            return list(self.layers)  # every row: work in place, no copy
        return [LayerKV(layer.k[rows], layer.v[rows]) if layer is not None else None for layer in self.layers]

    def update(self, rows: torch.Tensor, layers: list[LayerKV | None], query: torch.Tensor, x: torch.Tensor) -> None:
        """Take back the K/V a partial forward wrote for `rows` at positions `query`."""
        if rows.numel() != self.ids.shape[0]:
            for own, new in zip(self.layers, layers):
                assert own is not None and new is not None
                own.k[rows] = new.k
                own.v[rows] = new.v
        ids = self.ids[rows]
        ids.scatter_(1, query, x.gather(1, query))
        self.ids[rows] = ids

    def add_rows(self, n: int) -> None:
        """n more rows (joining a running loop), with nothing cached yet."""
        self.ids = torch.cat([self.ids, self.ids.new_full((n, self.ids.shape[1]), -1)])
        for i, layer in enumerate(self.layers):
            if layer is not None:
                extra = layer.k.new_zeros((n,) + tuple(layer.k.shape[1:]))
                self.layers[i] = LayerKV(torch.cat([layer.k, extra]), torch.cat([layer.v, extra]))

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Only `rows`, in that order (rows that are done leave a running loop)."""
        self.ids = self.ids[rows]
        self.layers = [LayerKV(layer.k[rows], layer.v[rows]) if layer is not None else None for layer in self.layers]

    def fit_width(self, width: int) -> None:
        """Pad to a batch that got wider because a span grew (new positions are pads), or crop to one that
        got narrower because its widest rows left it."""
        extra = width - self.ids.shape[1]
        if extra < 0:
            self.ids = self.ids[:, :width]
            self.layers = [LayerKV(layer.k[:, :, :width], layer.v[:, :, :width]) if layer is not None else None
                           for layer in self.layers]
            return
        if extra == 0:
            return
        self.ids = torch.nn.functional.pad(self.ids, (0, extra), value=-1)
        for i, layer in enumerate(self.layers):
            if layer is not None:
                pad = (0, 0, 0, extra)
                self.layers[i] = LayerKV(torch.nn.functional.pad(layer.k, pad), torch.nn.functional.pad(layer.v, pad))

    def trimmed(self, b: int, length: int) -> list[LayerKV]:
        """Row b's K/V up to `length`, copied out of the batch's storage."""
        return [LayerKV(layer.k[b : b + 1, :, :length].clone(), layer.v[b : b + 1, :, :length].clone())
                for layer in self.layers if layer is not None]
