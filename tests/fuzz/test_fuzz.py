"""Protocol fuzzing against the real `dcomplete serve` over stdio (the short run; the long one is
`python tests/fuzz/run.py --messages 10000 --seed S`, figures in docs/figures.md).

About 1,000 seeded messages, valid and hostile, with one 10 MB document; see fuzz_driver for the
properties. The seed is in the failure message, and the same seed sends the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzz_driver import run_fuzz

SEED = 20261201


@pytest.mark.slow
def test_a_thousand_fuzzed_messages_leave_the_server_correct_and_serving(tiny_dream: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    report = run_fuzz(1000, SEED, str(tiny_dream), log, big_every=700)
    summary = json.dumps(report.summary())
    context = f"seed {SEED}: {summary}\n" + "\n".join(report.problems) + f"\nserver log: {log}"
    assert report.kinds["10 MB document"] == 1, context
    assert {"batch array", "invalid JSON", "truncated header", "lone surrogates", "duplicate ids"} <= set(report.kinds)
    assert not report.crashed, context
    assert report.unanswered == 0 and report.extra_responses == 0, context
    assert report.responses == report.requests > 300, context
    assert report.mismatches == 0, context
    assert report.valid_errors == 0, context
    assert report.final_request_ok and report.exit_code == 0, context
