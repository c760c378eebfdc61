"""Reuse of a document's keys/values across consecutive requests (keystrokes) on the same document.

After a request, the engine keeps the K/V of its canvas with the ids they were computed from. The next
canvas of the same document shares a token prefix with it (text above the edit) and a token suffix
(text below the edit, shifted by the edit's change in length). Prefix K/V are reused as they are; suffix
K/V are re-rotated by the shift (RoPE rotations compose: R(p + d) = R(d) R(p)), so only the edited tokens
and the mask spans run through the model on the first step. Like Fast-dLLM's cache this is an
approximation for a bidirectional model (the reused K/V saw the old text); the loop refreshes the whole
canvas whenever a span completes, and agreement with the uncached loop is measured in bench/.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import torch

from engine.models.layers import LayerKV, apply_rotary, rotary_tables
from engine.models.transformer import Transformer

MIN_REUSED_FRACTION = 0.5


@dataclass
class DocKV:
    ids: list[int]  # the canvas ids the cached K/V were computed from
    layers: list[LayerKV]  # (1, H_kv, len(ids), D) each


class DocCache:
    """A small LRU of DocKV by document id."""

    def __init__(self, capacity: int = 8) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, DocKV] = OrderedDict()

    def get(self, doc_id: str | None) -> DocKV | None:
        if doc_id is None or doc_id not in self._items:
            return None
        self._items.move_to_end(doc_id)
        return self._items[doc_id]

    def put(self, doc_id: str, kv: DocKV) -> None:
        self._items[doc_id] = kv
        self._items.move_to_end(doc_id)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def clear(self) -> None:
        self._items.clear()


def common_prefix(a: list[int], b: list[int], limit: int) -> int:
    n = 0
    for x, y in zip(a[:limit], b[:limit]):
        if x != y:
            break
        n += 1
    return n


def warm_layers(
    old: DocKV, new_ids: list[int], mask_id: int, model: Transformer
) -> tuple[list[LayerKV | None], torch.Tensor] | None:
    """Cached layers for `new_ids` built from `old`, and the positions (1, Q) that must still be run
    (the edited region). None when too little of the new canvas can be reused."""
    masks = [i for i, t in enumerate(new_ids) if t == mask_id]
    if not masks:
        return None
    length, old_len = len(new_ids), len(old.ids)
    prefix = common_prefix(old.ids, new_ids, masks[0])
    suffix_limit = min(length - masks[-1] - 1, old_len - prefix)
    suffix = common_prefix(old.ids[::-1], new_ids[::-1], suffix_limit)
    if prefix + suffix < MIN_REUSED_FRACTION * length:
        return None
    shift = length - old_len
    device = old.layers[0].k.device
    layers: list[LayerKV | None] = []
    cos = sin = None
    if suffix and shift:
        delta = torch.full((1, suffix), shift, device=device)
        cos, sin = rotary_tables(delta, model.head_dim, model.shape.rope_theta, old.layers[0].k.dtype)
    for layer in old.layers:
        k = layer.k.new_zeros(layer.k.shape[:2] + (length, layer.k.shape[3]))
        v = torch.zeros_like(k)
        k[:, :, :prefix], v[:, :, :prefix] = layer.k[:, :, :prefix], layer.v[:, :, :prefix]
        if suffix:
            old_k = layer.k[:, :, old_len - suffix :]
            k[:, :, length - suffix :] = apply_rotary(old_k, cos, sin) if cos is not None else old_k
            v[:, :, length - suffix :] = layer.v[:, :, old_len - suffix :]
        layers.append(LayerKV(k, v))
    edited = torch.arange(prefix, length - suffix, device=device)[None]
    return layers, edited
