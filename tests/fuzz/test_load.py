"""Memory and load against the real server (the short run; `python tests/fuzz/load.py --requests 5000
--documents 200` is the long one, figures in the README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from load import run_load


@pytest.mark.slow
def test_typing_bursts_and_200_documents_keep_memory_flat(tiny_dream: Path) -> None:
    report = run_load(requests=600, documents=200, model=str(tiny_dream), warmup=150)
    context = json.dumps(report.summary())
    assert report.answered == report.requests == 950 and report.errors == 0, context
    assert report.documents == 200, context
    assert report.growth_mb < 50, context
    assert report.exit_code == 0, context


@pytest.mark.slow
def test_a_slow_model_drops_superseded_requests_instead_of_queueing_them(tiny_dream: Path) -> None:
    report = run_load(requests=150, documents=0, model=str(tiny_dream), slow_ms=200, warmup=10)
    context = json.dumps(report.summary())
    assert report.answered == report.requests == 160 and report.errors == 0, context
    # 160 keystrokes, each request superseding the last: only a fraction reach the model, and the whole
    # burst takes far less than 160 x 200 ms
    assert 0 < report.inferences < 160 / 3, context
    assert report.seconds < 160 * 0.2 / 2, context
