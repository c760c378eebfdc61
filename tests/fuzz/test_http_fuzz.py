"""Hostile HTTP traffic against a real `dcomplete engine` on loopback (the short run; the long one is
`python tests/fuzz/http_run.py --requests 5000 --seed S --model default`, figures in docs/figures.md).

2,000 seeded requests across every endpoint and method, valid and hostile (invalid, truncated and deeply
nested JSON, wrong types, unknown fields, absurd numbers, huge strings and line counts, bad headers and
HTTP, wrong methods, oversized bodies); see http_driver for the properties. The seed is in the failure
message, and the same seed sends the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from http_driver import run_http_fuzz

SEED = 20261203


@pytest.mark.slow
def test_two_thousand_hostile_requests_get_4xx_never_5xx_and_leave_the_server_serving(tiny_anchored: Path) -> None:
    report = run_http_fuzz(2000, SEED, str(tiny_anchored), workers=8, huge_chars=400_000, huge_lines=110_000)
    context = f"seed {SEED}: {json.dumps(report.summary())}\n" + "\n".join(report.problems)
    hostile = {"deep nesting", "invalid JSON", "truncated JSON", "absurd number", "huge string", "100k+ lines",
               "wrong method", "broken HTTP", "oversized body", "unicode", "canvas edges", "bad Content-Length"}
    assert hostile <= set(report.kinds), context
    assert report.answered == report.requests == 2000 and report.unanswered == 0, context
    assert report.server_errors == 0 and report.statuses[500] == 0, context
    assert report.wrong_status == 0 and report.bad_error_bodies == 0, context
    assert {400, 404, 405, 413} <= set(report.statuses) and report.classes()["2xx"] > 400, context
    assert not report.crashed and report.final_request_ok, context
    assert report.growth_mb < 400 and report.late_growth_mb < 120, context  # see http_driver: leak or high-water mark
