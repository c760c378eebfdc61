"""Re-decoding past a broken continuation (infill.bans) on a real left-to-right engine (the tiny random
anchored checkpoint: its text is noise, which breaks the parse often, so retries run and the settled
result is what the test checks)."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from engine import DenoiseParams, Engine
from infill import FillOptions, fill, plan_completion, plan_regenerate
from infill.bans import BanLead, BodyLead, blamed_offset, lead_token_count, moved_spans, plan_ban
from infill.canvas import line_break_ids
from infill.fill import FillJob
from infill.fill_document import DocumentFill
from infill.languages import get_language
from infill.repair import baseline, check_filled
from infill.spots import Edit, Spot, apply_edits
from tests.support.recording import Recording

pytestmark = pytest.mark.slow

SOURCE = '''class Counter:
    def __init__(self, start):
        self.count = start

        self.seen = []

    def bump(self, step):
        self.count += step
        return self.count
'''


@pytest.fixture(scope="module")
def engine(tiny_anchored: Any) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


def test_a_ban_restarts_at_the_offending_token_and_remembers_earlier_bans() -> None:
    span = [11, 12, 13, 0, 0]
    assert plan_ban(span, span[:3], 1, 0, frozenset({0}), {}).banned == frozenset({12})  # type: ignore[union-attr]
    earlier = {(11,): frozenset({40})}
    assert plan_ban(span, span[:3], 1, 0, frozenset({0}), earlier).banned == frozenset({12, 40})  # type: ignore[union-attr]
    assert plan_ban(span, span[:3], 3, 0, frozenset({0, 2}), {}).banned == frozenset({0, 2})  # type: ignore[union-attr]
    assert plan_ban(span, span[:3], 0, 1, frozenset({0}), {}) is None  # inside the healed lead
    assert plan_ban(span, span[:3], 5, 0, frozenset({0}), {}) is None  # no room left after the text


def test_retries_decode_again_from_the_offending_token_with_it_banned(engine: Engine) -> None:
    recorder = Recording(engine)
    spots = [plan_regenerate(SOURCE, line, line, "python", tokenizer=engine.tokenizer) for line in (3, 8)]
    result = fill(recorder, SOURCE, spots, DenoiseParams(), options=FillOptions(retries=2))
    first, *retries = recorder.calls
    assert retries, "the noise of a random model breaks the parse, so a retry must run"
    for (request,) in retries:
        assert request.max_grow == 0
        leads = [lead for lead in request.span_leads if lead is not None]
        assert leads and all(isinstance(lead, BanLead) and lead.banned for lead in leads)
        for lead in leads:
            allowed = lead.allowed([])
            assert allowed is not None and not allowed & lead.banned
        assert request.canvas[: first[0].canvas.index(engine.special.mask_id)] == \
            first[0].canvas[: first[0].canvas.index(engine.special.mask_id)]
    assert result.attempts == len(recorder.calls)
    ast.parse(apply_edits(SOURCE, result.edits))  # whatever is shown leaves the file parsing


@pytest.mark.parametrize("line", [4, 6, 9])
def test_a_completion_never_leaves_the_file_unparsable(engine: Engine, line: int) -> None:
    lines = SOURCE.split("\n")
    text = "\n".join(lines[: line - 1] + ["        "] + lines[line - 1 :])
    cursor = sum(len(x) + 1 for x in lines[: line - 1]) + 8
    spot = plan_completion(text, cursor)
    assert spot is not None
    for seed in range(2):
        result = fill(engine, text, [spot], DenoiseParams(seed=seed, temperature=1.0), options=FillOptions())
        ast.parse(apply_edits(text, result.edits))
        assert result.edits or result.notes


def test_a_completion_that_ran_out_of_room_keeps_its_whole_lines_only(engine: Engine) -> None:
    """A block after a header has no stop token, and the random model's noise often runs to the end of the
    span's room without an end: a multi-line suggestion then ends where a line ended, never half-way
    through a statement; one line that ran out is left as written, to the parse check."""
    text = SOURCE.replace("        self.count += step\n        return self.count\n", "        ")
    spot = plan_completion(text, len(text))
    assert spot is not None and spot.kind == "block"
    special, breaks = engine.special, line_break_ids(engine.tokenizer)
    options = FillOptions(retries=0, keep_invalid=True)
    cut = 0
    for seed in range(8):
        params = DenoiseParams(seed=seed, temperature=1.0)
        document = DocumentFill(FillJob(text, (spot,), "python"), engine, options)
        (raw,) = engine.infill([document.first_request()], params)
        span = list(raw.canvas[raw.spans[0].start : raw.spans[0].end])
        if any(t in (special.eos_id, special.pad_id, special.mask_id) for t in span):
            continue  # it ended: shown as written, if it parses
        result = fill(engine, text, [spot], params, options=options)
        (edit,) = result.edits
        lead = lead_token_count(engine.tokenizer, span, document.canvas.slots[0].lead)
        if any(t in breaks for t in span[lead:]):
            assert edit.token_ids[-1] in breaks, engine.tokenizer.decode(list(edit.token_ids))
            cut += len(edit.token_ids) < len(span)
        else:
            assert list(edit.token_ids) == list(span)
    assert cut, "no multi-line span ran out of room: the test shows nothing"


def test_a_retry_after_a_header_may_not_end_until_the_header_has_a_body(engine: Engine) -> None:
    """The last attempt ended right after `for x in xs:`: its retry may not end while the text ends with
    a line that opens a block (the header, or one written below it), and may once a body line follows."""
    tokenizer, special = engine.tokenizer, engine.special
    ends = frozenset({special.eos_id, special.pad_id})
    lead = BodyLead(BanLead(None, (), ends, tokenizer), "    for x in xs:", get_language("python"), ends, tokenizer)

    def ids(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False))

    first = lead.allowed([])
    assert first is not None and not first & ends  # the banned first token
    for text in ("\n", "\n        if x:", "\n        if x:\n"):
        allowed = lead.allowed(ids(text))
        assert allowed is not None and not allowed & ends, text
    for text in ("\n        y = x", "\n        if x:\n            y = x"):
        allowed = lead.allowed(ids(text))
        assert allowed is not None and ends <= allowed, text  # never None: one verified token a step


def test_slots_after_a_retried_span_that_grew_move_with_it() -> None:
    positions = [(10, 30), (40, 50), (60, 70)]
    # slot 0 kept 12 tokens, its retry span started at 22 and grew from 8 masks to 20 positions
    assert moved_spans(positions, {0: 12}, [(22, 42)]) == [(10, 42), (52, 62), (72, 82)]
    assert moved_spans(positions, {1: 3}, [(43, 50)]) == positions  # it did not grow: nothing moves


def test_a_result_that_ends_by_opening_a_block_is_blamed_at_its_end() -> None:
    """tree-sitter puts the error of a hole filled with `if low < high {` at the `if` (the function's `}`
    closes the new block and the function is left open): the retry must ban the end that came after the
    opener, as for Python's `expected an indented block`, not the `if`."""
    rust = get_language("rust")
    text = "pub fn clamp(value: i32, low: i32, high: i32) -> i32 {\n    // <|hole|>\n}\n"
    start = text.index("// <|hole|>")
    spot = Spot(start, start + len("// <|hole|>"), 64, "block")
    opener = "if low < high {"
    check = check_filled(text, [Edit(spot.start, spot.end, opener, ())], baseline(text, rust, [spot]), rust)
    assert check.added > 0 and check.where == (0,)
    assert blamed_offset(opener, 0, rust) == len(opener)
    assert blamed_offset("let x = (1;", 8, rust) == 8


def test_a_result_that_unbinds_a_name_is_retried_from_its_end_with_the_end_banned(engine: Engine) -> None:
    """A result that parses but no longer binds a name read below wrote nothing wrong in itself: its retry
    keeps every token it wrote and may not end there (repair.scope_check blames the end of its text)."""
    from engine import InfillResult, Span

    text = "def f(box):\n    width = box[2] - box[0]\n    return width\n"
    spot = plan_regenerate(text, 2, 2, "python", tokenizer=engine.tokenizer)
    document = DocumentFill(FillJob(text, (spot,), "python"), engine, FillOptions())
    request = document.first_request()
    mask, ends = engine.special.mask_id, frozenset({engine.special.eos_id, engine.special.pad_id})
    start, room = request.canvas.index(mask), request.canvas.count(mask)
    (slot,) = document.canvas.slots
    written = list(engine.tokenizer.encode(slot.lead + "    print(box)\n", add_special_tokens=False))
    span = written + [engine.special.eos_id] * (room - len(written))
    document.absorb(InfillResult(request.canvas[:start] + span + request.canvas[start + room :],
                                 [Span(start, start + room, span)]))
    (attempt,) = document.attempts
    assert attempt.check.unbound and attempt.check.unbound[0] is not None
    assert attempt.check.unbound[0].name == "width" and attempt.check.where == (len("    print(box)\n"),)
    assert document.wants_retry()
    retry = document.retry_request()
    assert retry.canvas[: start + len(written)] == request.canvas[:start] + written  # what it wrote stays
    assert retry.canvas[start + len(written)] == mask
    (lead,) = retry.span_leads
    assert isinstance(lead, BanLead) and lead.banned == ends
    first = lead.allowed([])
    assert first is not None and not first & ends


def test_a_retry_keeps_the_first_request_s_statement_rule_and_time_limit(engine: Engine) -> None:
    """An automatic trigger's retry ends as its first request does: at the first statement when asked, and at
    the first parsing line end past the time limit, counted from what the retry writes (its lead is among
    the kept tokens)."""
    from engine import InfillResult, Span
    from infill.line_deadline import LineDeadline
    from infill.span_end import TextEnd

    text = "def f(box):\n    width = box[2] - box[0]\n    return width\n"
    spot = plan_regenerate(text, 2, 2, "python", tokenizer=engine.tokenizer)
    options = FillOptions(first_statement=True, line_deadline_ms=600)
    document = DocumentFill(FillJob(text, (spot,), "python"), engine, options)
    request = document.first_request()
    (slot,) = document.canvas.slots
    (first_end,) = request.span_ends
    assert isinstance(first_end, LineDeadline) and first_end.ms == 600 and first_end.lead == slot.lead
    mask = engine.special.mask_id
    start, room = request.canvas.index(mask), request.canvas.count(mask)
    written = list(engine.tokenizer.encode(slot.lead + "    print(box)\n", add_special_tokens=False))
    span = written + [engine.special.eos_id] * (room - len(written))
    document.absorb(InfillResult(request.canvas[:start] + span + request.canvas[start + room :],
                                 [Span(start, start + room, span)]))
    assert document.wants_retry()
    (retry_end,) = document.retry_request().span_ends
    assert isinstance(retry_end, LineDeadline) and retry_end.ms == 600 and retry_end.lead == ""
    inner = retry_end.inner
    assert isinstance(inner, TextEnd) and isinstance(first_end.inner, TextEnd)
    assert inner.before == written and inner.first == first_end.inner.first
