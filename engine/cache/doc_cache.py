"""Reuse of a document's keys/values across consecutive requests (keystrokes) on the same document.

After a request, the engine keeps the K/V of its canvas with the ids they were computed from. The next
canvas of the same document is aligned with it by a token diff: text above an edit matches in place,
text below it matches shifted by the edit's change in length. Matched K/V are reused, re-rotated by
their shift (RoPE rotations compose: R(p + d) = R(d) R(p)), so only the edited tokens and the mask spans
run through the model on the first step. Like Fast-dLLM's cache this is an
approximation for a bidirectional model (the reused K/V saw the old text); `refresh_every` bounds how
long it lasts, and agreement with the uncached loop is measured in bench/.
"""

from __future__ import annotations

import difflib
from collections import OrderedDict
from dataclasses import dataclass, field

import torch

from engine.models.layers import LayerKV, rotated_by
from engine.models.transformer import Transformer

MIN_REUSED_FRACTION = 0.5


@dataclass
class DocKV:
    ids: list[int]  # the canvas ids the cached K/V were computed from
    layers: list[LayerKV]  # (1, H_kv, len(ids), D) each
    spans: list[tuple[int, int]] | None = None  # the canvas's spans, for families whose cache follows them
    block: int | None = None  # the block size the K/V were computed with (block-diffusion families)
    text_logits: dict[int, torch.Tensor] = field(default_factory=dict)  # logits of text rows a step read, by position

    @property
    def nbytes(self) -> int:
        """The bytes the entry keeps alive: its tensors' storage (a view of a larger tensor keeps all of it)."""
        tensors = [t for layer in self.layers for t in (layer.k, layer.v)] + list(self.text_logits.values())
        return sum(t.untyped_storage().nbytes() for t in tensors)


DEFAULT_BUDGET_BYTES = 256 * 1024 * 1024


class DocCache:
    """An LRU of DocKV by document id, bounded by entries and by bytes (the least recently used
    documents go first; an entry larger than the whole budget is not kept)."""

    def __init__(self, capacity: int = 8, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self.capacity = capacity
        self.budget_bytes = budget_bytes
        self._items: OrderedDict[str, DocKV] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        return sum(kv.nbytes for kv in tuple(self._items.values()))  # a snapshot: a metrics scrape reads it too

    def set_budget(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._trim()

    def get(self, doc_id: str | None) -> DocKV | None:
        if doc_id is None or doc_id not in self._items:
            return None
        self._items.move_to_end(doc_id)
        return self._items[doc_id]

    def put(self, doc_id: str, kv: DocKV) -> None:
        self._items[doc_id] = kv
        self._items.move_to_end(doc_id)
        self._trim()

    def _trim(self) -> None:
        total = self.nbytes
        while self._items and (len(self._items) > self.capacity or total > self.budget_bytes):
            _, dropped = self._items.popitem(last=False)
            total -= dropped.nbytes

    def forget(self, doc_id: str) -> None:
        self._items.pop(doc_id, None)

    def clear(self) -> None:
        self._items.clear()


def warm_layers(
    old: DocKV, new_ids: list[int], mask_id: int, model: Transformer
) -> tuple[list[LayerKV | None], torch.Tensor] | None:
    """Cached layers for `new_ids` built from `old`, and the positions (1, Q) that must still be run
    (edited text and masks). None when too little of the new canvas can be reused.

    The two canvases are aligned with a diff (matching runs of identical tokens); each matched run keeps
    its K/V, re-rotated by how far it moved.
    """
    if mask_id not in new_ids:
        return None
    length = len(new_ids)
    matcher = difflib.SequenceMatcher(a=old.ids, b=new_ids, autojunk=False)
    runs = [(i, j, n) for i, j, n in matcher.get_matching_blocks() if n]
    reused = torch.zeros(length, dtype=torch.bool)
    for _, j, n in runs:
        reused[j : j + n] = True
    reused &= torch.tensor(new_ids) != mask_id
    if int(reused.sum()) < MIN_REUSED_FRACTION * length:
        return None
    device = old.layers[0].k.device
    layers: list[LayerKV | None] = []
    for layer in old.layers:
        k = layer.k.new_zeros(layer.k.shape[:2] + (length, layer.k.shape[3]))
        v = torch.zeros_like(k)
        for i, j, n in runs:
            old_k = layer.k[:, :, i : i + n]
            if j != i:
                old_k = rotated_by(old_k, torch.full((1, n), j - i, device=device), model.rotary_dim,
                                   model.shape.rope_theta)
            k[:, :, j : j + n] = old_k
            v[:, :, j : j + n] = layer.v[:, :, i : i + n]
        layers.append(LayerKV(k, v))
    edited = (~reused).nonzero().flatten().to(device)[None]
    return layers, edited
