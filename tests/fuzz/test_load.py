"""Memory and load against the real server (the short run; `python tests/fuzz/load.py --requests 5000
--documents 200` is the long one, figures in docs/figures.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from load import run_load


@pytest.mark.slow
def test_typing_bursts_and_200_documents_keep_memory_flat(tiny_dream: Path) -> None:
    report = run_load(requests=300, documents=200, model=str(tiny_dream), warmup=100)
    context = json.dumps(report.summary())
    assert report.answered == report.requests == 600 and report.errors == 0, context
    assert report.documents == 200, context
    assert report.growth_mb < 50, context
    assert report.exit_code == 0, context


@pytest.mark.slow
def test_a_slow_model_drops_superseded_requests_instead_of_queueing_them(tiny_dream: Path) -> None:
    report = run_load(requests=90, documents=0, model=str(tiny_dream), slow_ms=200, warmup=10)
    context = json.dumps(report.summary())
    assert report.answered == report.requests == 100 and report.errors == 0, context
    # 100 keystrokes, each request superseding the last: only a fraction reach the model (each of which
    # sleeps 200 ms), so the burst never waits for 100 x 200 ms of queued work
    assert 0 < report.inferences < 100 / 3, context
