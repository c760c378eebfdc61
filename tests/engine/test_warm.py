"""Prefilling a document's canvas before its first request (what a language server does on open)."""

from __future__ import annotations

import pytest

import infill
from engine import DenoiseParams, Engine, InfillRequest


@pytest.fixture(scope="module")
def anchored(tiny_anchored) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


def test_a_warmed_document_runs_only_its_gap_and_writes_what_a_cold_one_writes(anchored):
    sp, tok = anchored.special, anchored.tokenizer
    canvas = [sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 6 + tok.encode("\n\nx = 1\n")
    params = DenoiseParams(threshold=0.3)
    anchored.warm([InfillRequest(canvas, doc_id="warm")], params)
    assert len(anchored.doc_cache) == 1
    warm = anchored.infill([InfillRequest(canvas, doc_id="warm")], params)[0]
    cold = anchored.infill([InfillRequest(canvas)], params)[0]
    assert warm.canvas == cold.canvas
    assert warm.stats.positions < cold.stats.positions - len(canvas) // 2
    anchored.forget("warm")


def test_infill_warms_the_canvas_its_fill_builds(anchored):
    text = "import os\n\n\ndef area(w, h):\n    \n\n\nprint(area(2, 3))\n"
    spot = infill.plan_completion(text, text.index("    \n") + 4, language="python")
    assert spot is not None
    job = infill.FillJob(text, (spot,), "python", "doc")
    infill.warm(anchored, job)
    warm = infill.fill(anchored, text, [spot], doc_id="doc")
    cold = infill.fill(anchored, text, [spot])
    assert warm.edits == cold.edits and warm.canvas_ids == cold.canvas_ids
    assert warm.stats.positions < cold.stats.positions
    anchored.forget("doc")
