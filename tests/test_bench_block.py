"""The block-diffusion benchmarks end to end on tiny checkpoints: each ends with one JSON line."""

from __future__ import annotations

import json

import pytest

from bench import block_cache, speed

pytestmark = pytest.mark.slow


def last_json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_block_cache_is_exact_and_cheaper(capsys):
    block_cache.main(["--cases", "1", "--span", "12"])
    rows = last_json(capsys)["rows"]
    assert set(rows) == {f"{f}/{r}" for f in ("sdar", "fast_dllm", "llada2") for r in ("reference", "threshold")}
    for row in rows.values():
        assert row["agreement"] == 1.0
        assert row["positions_per_token_fixed"] < row["positions_per_token_none"]


def test_speed_on_a_block_checkpoint(tiny_block, capsys):
    speed.main(["--model", str(tiny_block("sdar")), "--cases", "1", "--context", "256"])
    out = last_json(capsys)
    assert set(out["rows"]) == {"line", "16", "32", "64"} and out["tokens_per_forward"] >= 1.0
