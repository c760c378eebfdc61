"""A span end crosses to an engine server as data (`remote.client._end_spec`) and comes back the same kind
of object there (`remote.server.service._span_end`): a language server's automatic trigger keeps its time
limit (`automaticMs`) on a shared engine."""

from __future__ import annotations

from types import SimpleNamespace

from infill.canvas import Slot
from infill.languages import get_language
from infill.line_deadline import LineDeadline
from infill.span_end import TextEnd
from infill.spots import Spot
from remote.client import _end_spec
from remote.server.service import _span_end
from tests.support.checkpoints import tiny_tokenizer

TEXT = "def f(x):\n    return x\n\n"
SLOT = Slot(Spot(len(TEXT), len(TEXT), 32, "block"), 0, 32, lead="\n")


def test_a_time_limited_span_end_reaches_the_engine_server_with_its_limit() -> None:
    tokenizer = tiny_tokenizer()
    engine = SimpleNamespace(tokenizer=tokenizer)
    sent = _end_spec(LineDeadline(600, SLOT.lead, tokenizer, TextEnd(SLOT, TEXT, get_language("python"), tokenizer)))
    assert sent.deadline_ms == 600
    rebuilt = _span_end(engine, sent, "span_ends[0]")
    assert isinstance(rebuilt, LineDeadline) and rebuilt.ms == 600 and rebuilt.lead == SLOT.lead
    assert isinstance(rebuilt.inner, TextEnd) and rebuilt.inner.slot == SLOT and rebuilt.inner.text == TEXT


def test_a_span_end_without_a_limit_stays_a_text_end() -> None:
    tokenizer = tiny_tokenizer()
    sent = _end_spec(TextEnd(SLOT, TEXT, get_language("python"), tokenizer, before=[3, 4]))
    assert sent.deadline_ms is None
    rebuilt = _span_end(SimpleNamespace(tokenizer=tokenizer), sent, "span_ends[0]")
    assert isinstance(rebuilt, TextEnd) and rebuilt.before == [3, 4]


def test_a_retry_s_limit_counts_from_what_it_writes_on_the_engine_server_too() -> None:
    tokenizer = tiny_tokenizer()
    retry = LineDeadline(600, "", tokenizer, TextEnd(SLOT, TEXT, get_language("python"), tokenizer, before=[3, 4]))
    rebuilt = _span_end(SimpleNamespace(tokenizer=tokenizer), _end_spec(retry), "span_ends[0]")
    assert isinstance(rebuilt, LineDeadline) and rebuilt.lead == "" and rebuilt.inner.before == [3, 4]
