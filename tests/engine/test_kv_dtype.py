"""Which dtype the anchored family's cache keeps keys in (`engine.cache.kv_dtype`)."""

from __future__ import annotations

import torch

from engine import Engine
from engine.cache import kv_dtype as kv


def test_a_float32_model_on_a_cpu_keeps_bfloat16_keys_where_the_cpu_multiplies_them(monkeypatch):
    cpu = torch.device("cpu")
    monkeypatch.delenv(kv.ENV, raising=False)
    monkeypatch.setattr(kv, "_native_bfloat16", lambda: True)
    assert kv.kv_dtype(cpu, torch.float32) == torch.bfloat16
    monkeypatch.setattr(kv, "_native_bfloat16", lambda: False)
    assert kv.kv_dtype(cpu, torch.float32) == torch.float32
    monkeypatch.setenv(kv.ENV, "bfloat16")
    assert kv.kv_dtype(cpu, torch.float32) == torch.bfloat16
    monkeypatch.setattr(kv, "_native_bfloat16", lambda: True)
    monkeypatch.setenv(kv.ENV, "float32")
    assert kv.kv_dtype(cpu, torch.float32) == torch.float32


def test_other_devices_and_dtypes_keep_the_compute_dtype(monkeypatch):
    monkeypatch.setenv(kv.ENV, "bfloat16")
    assert kv.kv_dtype(torch.device("cuda"), torch.float32) == torch.float32
    assert kv.kv_dtype(torch.device("cuda"), torch.float16) == torch.float16
    assert kv.kv_dtype(torch.device("cpu"), torch.float16) == torch.float16


def test_only_a_load_that_leaves_the_kernels_to_the_engine_narrows_the_keys(tiny_anchored, monkeypatch):
    """An asked dtype keeps every number in it (the reference runs, bench.speed --vs-float32)."""
    monkeypatch.setenv(kv.ENV, "bfloat16")
    assert Engine.load(tiny_anchored, device="cpu").loaded.kv_dtype == torch.bfloat16
    assert Engine.load(tiny_anchored, device="cpu", dtype="float32").loaded.kv_dtype is None
