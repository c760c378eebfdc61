"""Rows that name a document, in a batch of any size: each starts from the document's kept keys and
values, and one of them (the first taken) keeps its own for the document's next request. A completion's
alternatives are such rows (one document, several canvases), and so are the calls a shared engine runs in
one loop."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engine import DenoiseParams, Engine, InfillRequest, InfillResult
from engine.batcher import Batcher
from engine.cache.doc_cache import DocKV


@pytest.fixture(scope="module")
def engines(tiny_anchored, tiny_dream, tiny_block) -> dict[str, Engine]:
    return {"anchored": Engine.load(tiny_anchored, device="cpu"), "dream": Engine.load(tiny_dream, device="cpu"),
            "sdar": Engine.load(tiny_block("sdar"), device="cpu")}


def _canvases(engine: Engine) -> tuple[list[int], list[list[int]]]:
    """A first canvas of a document, then the same document a few keystrokes later, with three gap sizes."""
    sp, tok = engine.special, engine.tokenizer
    head = "import os\nimport sys\n\n\ndef area(w, h):\n    '''The area of a w by h box.'''\n"
    tail = tok.encode("\n\nprint(area(2, 3))\nprint(area(4, 5))\n") + [sp.eos_id]
    first = [sp.bos_id] + tok.encode(head + "    return") + [sp.mask_id] * 6 + tail
    later = [[sp.bos_id] + tok.encode(head + "    size = w\n    return") + [sp.mask_id] * n + tail for n in (6, 12, 3)]
    return first, later


def _each_alone(engine: Engine, canvases: list[list[int]], params: DenoiseParams,
                before: Callable[[], object]) -> list[tuple[InfillResult, DocKV | None]]:
    """Each canvas run alone on the document "doc" right after `before` (which sets up what it keeps), with
    what the document keeps then."""
    out = []
    for canvas in canvases:
        engine.forget("doc")
        before()
        out.append((engine.infill([InfillRequest(canvas, doc_id="doc")], params)[0], engine.doc_cache.get("doc")))
    engine.forget("doc")
    return out


@pytest.mark.parametrize("family", ["anchored", "dream", "sdar"])
def test_every_row_of_a_document_starts_from_its_keys_and_the_first_keeps_them(engines, family):
    engine = engines[family]
    params = DenoiseParams.fast(0.5)
    first, later = _canvases(engine)

    def first_request() -> object:
        return engine.infill([InfillRequest(first, doc_id="doc")], params)

    alone, kept_alone = zip(*_each_alone(engine, later, params, first_request))
    cold = engine.infill([InfillRequest(later[0])], params)[0]
    first_request()
    together = engine.infill([InfillRequest(canvas, doc_id="doc") for canvas in later], params)
    assert [r.canvas for r in together] == [r.canvas for r in alone]
    assert [r.stats.positions for r in together] == [r.stats.positions for r in alone]
    assert together[0].stats.prompt_positions < cold.stats.prompt_positions
    kept = engine.doc_cache.get("doc")
    assert kept is not None and kept_alone[0] is not None and kept.ids == kept_alone[0].ids  # the first row's


@pytest.mark.parametrize("family", ["anchored", "dream", "sdar"])
def test_rows_of_a_document_with_nothing_kept_share_the_first_row_s_prefill(engines, family):
    """Each row writes what it writes after the first row's canvas was prefilled for the document
    (`Engine.warm`), and the batch runs the fixed text once, not once a row."""
    engine = engines[family]
    params = DenoiseParams.fast(0.5)
    _, later = _canvases(engine)
    expected = [r for r, _ in _each_alone(engine, later, params,
                                          lambda: engine.warm([InfillRequest(later[0], doc_id="doc")], params))]
    together = engine.infill([InfillRequest(canvas, doc_id="doc") for canvas in later], params)
    assert [r.canvas for r in together] == [r.canvas for r in expected]
    cold = [engine.infill([InfillRequest(canvas)], params)[0] for canvas in later]
    saved = sum(r.stats.positions for r in cold) - sum(r.stats.positions for r in together)
    assert saved >= cold[0].stats.prompt_positions
    assert together[0].stats.forward_passes == expected[0].stats.forward_passes + 1  # its prefill counted


def test_a_document_s_third_request_reuses_what_its_second_did(engines):
    """A full-attention row that started from kept keys keeps them as computed from their ids: the request
    after it reuses them again (and runs only what changed since), instead of prefilling the window."""
    engine = engines["dream"]
    params = DenoiseParams.fast(0.5)
    first, (second, *_) = _canvases(engine)
    engine.forget("doc")
    engine.infill([InfillRequest(first, doc_id="doc")], params)
    engine.infill([InfillRequest(second, doc_id="doc")], params)
    third = engine.infill([InfillRequest(second, doc_id="doc")], params)[0]
    cold = engine.infill([InfillRequest(second)], params)[0]
    assert third.stats.prompt_positions < cold.stats.prompt_positions // 2


def test_calls_that_share_a_shared_engine_s_loop_each_keep_their_document(engines):
    engine = engines["anchored"]
    params = DenoiseParams.fast(0.5)
    first, (second, *_) = _canvases(engine)
    for doc in ("a", "b"):
        engine.forget(doc)
    batcher = Batcher(engine)
    try:
        batcher.infill([InfillRequest(first, doc_id="a"), InfillRequest(second, doc_id="b")], params)
        again = batcher.infill([InfillRequest(first, doc_id="a"), InfillRequest(second, doc_id="b")], params)
    finally:
        batcher.close()
    cold = engine.infill([InfillRequest(first)], params)[0]
    assert engine.doc_cache.get("a") is not None and engine.doc_cache.get("b") is not None
    assert all(r.stats.prompt_positions < cold.stats.prompt_positions // 2 for r in again)


class _JoinOnce:
    """A `RowFeed` whose requests join the running loop at its first step."""

    def __init__(self, joining: list[InfillRequest]) -> None:
        self.joining = joining
        self.results: dict[int, InfillResult] = {}

    def admit(self) -> list[InfillRequest]:
        joining, self.joining = self.joining, []
        return joining

    def done(self, index: int, result: InfillResult) -> None:
        self.results[index] = result

    def stepped(self, rows: int) -> None:
        pass


@pytest.mark.parametrize("family", ["anchored", "dream", "sdar"])
def test_a_row_that_joins_wider_than_the_batch_starts_from_its_document_s_keys(engines, family):
    engine = engines[family]
    params = DenoiseParams.fast(0.5)
    first, (_, wide, narrow) = _canvases(engine)

    def first_request() -> object:
        return engine.infill([InfillRequest(first, doc_id="doc")], params)

    ((alone, _),) = _each_alone(engine, [wide], params, first_request)
    first_request()
    feed = _JoinOnce([InfillRequest(wide, doc_id="doc")])
    engine.infill([InfillRequest(narrow)], params, feed=feed)
    assert feed.results[1].canvas == alone.canvas
    assert feed.results[1].stats.positions == alone.stats.positions


def test_a_document_keeps_the_keys_of_its_newest_row(engines):
    """A row of a document joins while an older row of it still runs (the request of the next keystroke):
    the newer row keeps its keys, whichever finishes last."""
    engine = engines["anchored"]
    params = DenoiseParams.fast(0.5)
    first, (_, wide, _) = _canvases(engine)
    engine.forget("doc")
    feed = _JoinOnce([InfillRequest(first, doc_id="doc")])
    engine.infill([InfillRequest(wide, doc_id="doc")], params, feed=feed)
    kept = engine.doc_cache.get("doc")
    spans = [[(span.start, span.end) for span in feed.results[i].spans] for i in (0, 1)]
    assert kept is not None and kept.spans == spans[1] != spans[0]
