"""The engine's per-document K/V cache stays within its byte budget and frees a document on forget."""

from __future__ import annotations

import torch

from engine.cache.doc_cache import DocCache, DocKV
from engine.models.layers import LayerKV


def kv(tokens: int, layers: int = 2) -> DocKV:
    """A cached canvas of `tokens` positions: 2 layers x (k, v) x 4 heads x 8 dims of float32."""
    return DocKV(list(range(tokens)), [LayerKV(torch.zeros(1, 4, tokens, 8), torch.zeros(1, 4, tokens, 8))
                                       for _ in range(layers)])


def test_least_recently_used_documents_go_first_when_bytes_run_out() -> None:
    one = kv(100).nbytes
    assert one == 2 * 2 * 4 * 100 * 8 * 4
    cache = DocCache(capacity=100, budget_bytes=3 * one)
    for name in "abc":
        cache.put(name, kv(100))
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("d", kv(100))
    assert cache.get("b") is None and {n for n in "acd" if cache.get(n)} == set("acd")
    assert cache.nbytes <= 3 * one

    cache.put("huge", kv(1000))  # larger than the whole budget: kept by nobody
    assert len(cache) == 0 and cache.nbytes == 0


def test_a_smaller_budget_trims_at_once_and_forget_frees_a_document() -> None:
    cache = DocCache(capacity=8, budget_bytes=10 * kv(10).nbytes)
    for name in "abcd":
        cache.put(name, kv(10))
    cache.set_budget(2 * kv(10).nbytes)
    assert len(cache) == 2 and cache.get("d") is not None
    cache.forget("d")
    assert len(cache) == 1 and cache.get("d") is None
    cache.set_budget(0)
    assert len(cache) == 0
