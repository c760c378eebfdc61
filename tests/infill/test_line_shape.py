"""A blank line that must open or close a block (infill.line_shape): which shape the baseline finds, what
`ShapeLead` lets a span write, and a retry held to it on a real left-to-right engine (the tiny random
anchored checkpoint: noise, so the test checks the retry's structure and that whatever is shown parses)."""

from __future__ import annotations

from typing import Any

import pytest

from engine import DenoiseParams, Engine
from infill import FillOptions, fill, plan_completion
from infill.bans import BanLead
from infill.languages import get_language
from infill.line_shape import LineShape, ShapeLead, indent_limit
from infill.repair import baseline
from infill.spots import Spot, apply_edits
from tests.support.recording import Recording

MISSING_OPENER = """function clamp(value, low, high) {
    if (value < low) {
        return low;
    }

        return high;
    }
    return value;
}
"""
MISSING_CLOSER = """function count(numbers) {
    let n = 0;
    for (const x of numbers) {
        n += x;

    return n;
}
"""
NEEDS_A_STATEMENT = """function total(numbers) {
    let n = 0;

    return n;
}
"""
MISSING_HEADER = '''def total(items):
    count = 0

        count += item
    return count
'''
MISSING_TRY = '''def read(path):

        return open(path).read()
    except OSError:
        return None
'''
PYTHON_HEADS = tuple(sorted(get_language("python").header_keywords))  # a line ending with `:` starts so


def blank_line_spot(text: str, line: int) -> Spot:
    offset = sum(len(x) + 1 for x in text.split("\n")[: line - 1])
    return Spot(offset, offset, 16, "line")


@pytest.mark.parametrize(("text", "language", "line", "shape"), [
    (MISSING_OPENER, "javascript", 5, LineShape((), "{")),
    (MISSING_CLOSER, "javascript", 5, LineShape(("}",), "")),
    (MISSING_HEADER, "python", 3, LineShape(PYTHON_HEADS, ":", "above")),  # indentation decides in Python
    (MISSING_TRY, "python", 2, LineShape(("try",), ":", "deeper")),  # `if True:` fails: an `except` follows
    (NEEDS_A_STATEMENT, "javascript", 3, None),
])
def test_the_stand_in_that_made_the_file_parse_gives_the_line_its_shape(
        text: str, language: str, line: int, shape: LineShape | None) -> None:
    found = baseline(text, get_language(language), [blank_line_spot(text, line)])
    assert found.parses and found.shape == shape


def test_a_line_has_its_shape_when_its_code_starts_and_ends_as_the_shape_says() -> None:
    opener, closer, both = LineShape((), "{"), LineShape(("}",), ""), LineShape(("}",), "{")
    assert opener.holds("    if (x) {") and not opener.holds("    return x;")
    assert closer.holds("    }") and closer.holds("} else {") and not closer.holds("    x = 1;")
    assert both.holds("} else {") and not both.holds("}") and not both.holds("if (x) {")
    assert opener.holds("    if x {", "    ") and not opener.holds("        if x {", "    ")


def test_indentation_is_bounded_by_the_code_around_the_line() -> None:
    offset = blank_line_spot(MISSING_OPENER, 5).start
    assert indent_limit(MISSING_OPENER, offset) == 8  # the deeper of `    }` above and `        return high;`


@pytest.fixture(scope="module")
def engine(tiny_anchored: Any) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


def test_a_line_that_must_open_a_block_cannot_end_before_it_does(engine: Engine) -> None:
    tokenizer = engine.tokenizer

    def ids(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False))

    breaks = {i for i in range(len(tokenizer)) if "\n" in tokenizer.decode([i])}
    lead = ShapeLead(None, LineShape((), "{"), "//", None, 4, tokenizer)
    allowed = lead.allowed(ids("    return x"))
    assert allowed is not None and allowed.isdisjoint(breaks)
    assert engine.special.eos_id not in allowed
    assert ids(";")[0] not in allowed and ids("}")[0] not in allowed  # no statement ends outside brackets
    assert not any("//" in tokenizer.decode([i]) for i in allowed)  # nor a comment
    inside = lead.allowed(ids("    for (i = 0"))
    assert inside is not None and ids(";")[0] in inside
    assert lead.allowed(ids("    if (x) {")) is None  # finished: the line break may end the span
    spaces = lead.allowed(ids("    "))
    assert spaces is not None and not any(tokenizer.decode([i]).isspace() for i in spaces)  # no more indentation


def test_a_line_whose_indentation_decides_starts_its_code_there(engine: Engine) -> None:
    tokenizer = engine.tokenizer
    lead = ShapeLead(None, LineShape(("try",), ":", "above"), "#", "    ", 8, tokenizer)
    allowed = lead.allowed([])
    assert allowed
    for i in allowed:
        text = tokenizer.decode([i])
        code = text.lstrip()
        assert "    ".startswith(text) if not code else text[: len(text) - len(code)] == "    " and (
            code.startswith("try") or "try".startswith(code)), repr(text)
    assert lead.allowed(list(tokenizer.encode("    try:", add_special_tokens=False))) is None


def test_a_line_that_must_close_a_block_starts_with_the_closer(engine: Engine) -> None:
    tokenizer = engine.tokenizer
    lead = ShapeLead(None, LineShape(("}",), ""), "//", None, 8, tokenizer)
    allowed = lead.allowed(list(tokenizer.encode("    ", add_special_tokens=False)))
    assert allowed
    assert all(tokenizer.decode([i]).strip().startswith("}") or tokenizer.decode([i]).isspace() for i in allowed)
    assert lead.allowed(list(tokenizer.encode("    }", add_special_tokens=False))) is None


def test_a_dropped_or_broken_line_is_retried_held_to_its_shape(engine: Engine) -> None:
    spot = plan_completion(MISSING_OPENER, blank_line_spot(MISSING_OPENER, 5).start, language="javascript")
    assert spot is not None
    shaped = 0
    for seed in range(3):
        recorder = Recording(engine)
        result = fill(recorder, MISSING_OPENER, [spot], DenoiseParams(seed=seed, temperature=1.0),
                      language="javascript", options=FillOptions())
        for (request,) in recorder.calls[1:2]:
            (lead,) = request.span_leads
            assert isinstance(lead, BanLead) and isinstance(lead.base, ShapeLead)
            shaped += 1
        filled = apply_edits(MISSING_OPENER, result.edits)
        assert not result.edits or not get_language("javascript").parse(filled).root_node.has_error
    assert shaped, "the random model's noise never broke the line: the test shows nothing"
