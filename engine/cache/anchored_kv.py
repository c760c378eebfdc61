"""The anchored family's per-row K/V of a batch being denoised: one tensor per layer that attention reads
as it is, with no copy per layer per step.

Each layer's keys and values are (B, H_kv, width + extra, D): canvas positions [0, width), with the ids
each was computed from (`ids`, -1 where nothing is cached), then `extra` slots holding the right-context
copies of `models.anchored.RightView` (keys of the fixed text after each gap, re-rotated to sit before
it). The copies depend on the layout and on the canvas keys they copy, never on what a gap writes, so they
are rewritten only when the layout changes or those keys are recomputed (`copies_of` names the view
they were made for), not on every step.

`text_logits` keeps, per row, the logits of fixed-text rows that a step read (the row before a gap: logits
are shifted, so a gap's first token comes from it) by canvas position. A row's logits depend on what its
K/V depend on, so they hold while its K/V do: a request whose text before a gap is cached (the same canvas
asked again, the cursor back where it was) reads them instead of running that row through the model again.
"""

from __future__ import annotations

import torch

from engine.models.layers import LayerKV


class AnchoredKV:
    def __init__(self, n_layers: int, rows: int, width: int, kv_heads: int, head_dim: int, dtype: torch.dtype,
                 device: torch.device, extra: int = 0) -> None:
        self.width, self.extra = width, extra
        shape = (rows, kv_heads, width + extra, head_dim)
        self.layers = [LayerKV(torch.zeros(shape, dtype=dtype, device=device),
                               torch.zeros(shape, dtype=dtype, device=device)) for _ in range(n_layers)]
        self.ids = torch.full((rows, width), -1, dtype=torch.long, device=device)
        self.copies_of: object = None
        self.text_logits: list[dict[int, torch.Tensor]] = [{} for _ in range(rows)]

    def _resize(self, width: int, extra: int, rows: torch.Tensor | None = None, add: int = 0) -> None:
        """Every layer at `width` canvas positions (cropped or padded) and `extra` copy slots, keeping only
        `rows` (in that order) and appending `add` empty rows; the copies are then stale."""
        keep = min(width, self.width)
        for layer in self.layers:
            for name in ("k", "v"):
                old = getattr(layer, name)
                if rows is not None:
                    old = old[rows]
                new = old.new_zeros((old.shape[0] + add, old.shape[1], width + extra, old.shape[3]))
                new[: old.shape[0], :, :keep] = old[:, :, :keep]
                setattr(layer, name, new)
        ids = self.ids if rows is None else self.ids[rows]
        kept = self.text_logits if rows is None else [self.text_logits[int(r)] for r in rows]
        self.text_logits = [{p: v for p, v in row.items() if p < keep} for row in kept] + [{} for _ in range(add)]
        self.ids = torch.full((ids.shape[0] + add, width), -1, dtype=torch.long, device=ids.device)
        self.ids[: ids.shape[0], :keep] = ids[:, :keep]
        self.width, self.extra, self.copies_of = width, extra, None

    def fit(self, width: int, extra: int) -> None:
        """`width` canvas positions (a batch that got wider or narrower) and `extra` copy slots."""
        if (width, extra) != (self.width, self.extra):
            self._resize(width, extra)

    def add_rows(self, n: int) -> None:
        """n more rows (joining a running loop), with nothing cached yet."""
        self._resize(self.width, self.extra, add=n)

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Only `rows`, in that order."""
        self._resize(self.width, self.extra, rows=rows)

    def select(self, rows: torch.Tensor) -> list[LayerKV | None]:
        """The layers for a forward over `rows`: in place when every row runs, else copies that `update`
        writes back."""
        if rows.numel() == self.ids.shape[0]:
            return list(self.layers)
        return [LayerKV(layer.k[rows], layer.v[rows]) for layer in self.layers]

    def update(self, rows: torch.Tensor, layers: list[LayerKV | None], query: torch.Tensor, x: torch.Tensor) -> None:
        """Take back what a forward over `rows` wrote: K/V at positions `query` (and the copies)."""
        if rows.numel() != self.ids.shape[0]:
            for own, new in zip(self.layers, layers):
                assert new is not None
                own.k[rows], own.v[rows] = new.k, new.v
        ids = self.ids[rows]
        ids.scatter_(1, query, x.gather(1, query))
        self.ids[rows] = ids

    def shift(self, b: int, at: int, n: int) -> None:
        """Row b's cached canvas positions from `at` on move n to the right (n masks were inserted there)."""
        for layer in self.layers:
            for t in (layer.k, layer.v):
                t[b, :, at + n : self.width] = t[b, :, at : self.width - n].clone()
        self.ids[b, at + n :] = self.ids[b, at : self.width - n].clone()
        self.ids[b, at : at + n] = -1
        moved = {p + n if p >= at else p: v for p, v in self.text_logits[b].items()}
        self.text_logits[b] = {p: v for p, v in moved.items() if p < self.width}
        self.copies_of = None

    def trimmed(self, b: int, length: int) -> list[LayerKV]:
        """Row b's canvas K/V up to `length` (what a document keeps across requests): views of a batch of
        one row's own storage (a loop keeps a row's keys when it ends; `DocKV.nbytes` counts the storage),
        copies out of a larger batch's, which would otherwise stay alive with it. Copying 30 layers after
        2,048 tokens cost several milliseconds of every request."""
        if self.ids.shape[0] == 1:
            return [LayerKV(layer.k[:, :, :length], layer.v[:, :, :length]) for layer in self.layers]
        return [LayerKV(layer.k[b : b + 1, :, :length].clone(), layer.v[b : b + 1, :, :length].clone())
                for layer in self.layers]
