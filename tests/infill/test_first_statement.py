"""An automatic trigger's suggestion stops after its first complete statement
(infill.first_statement), in the span end that stops the writing and in the text shown."""

from __future__ import annotations

from infill.canvas import Slot
from infill.first_statement import cut_to_first_statement, first_statement
from infill.languages import get_language
from infill.span_end import TextEnd
from infill.spots import Spot

PYTHON = get_language("python")
C = get_language("c")


def test_a_body_stops_after_its_first_complete_line() -> None:
    text = "def area(w, h):\n"
    assert first_statement("    x = w * h\n    return x\n", text, len(text), PYTHON) == "    x = w * h"
    assert first_statement("    x = w * h", text, len(text), PYTHON) is None  # no line break written yet


def test_a_statement_over_several_lines_is_kept_whole() -> None:
    text = "def f(xs):\n"
    body = "    total = sum(\n        x for x in xs\n    )\n    return total\n"
    assert first_statement(body, text, len(text), PYTHON) == "    total = sum(\n        x for x in xs\n    )"
    doc = '    """Sum of\n    the values."""\n    return 0\n'
    assert first_statement(doc, text, len(text), PYTHON) == '    """Sum of\n    the values."""'


def test_a_block_header_goes_on_to_the_first_statement_of_its_body() -> None:
    text = "def f(xs):\n"
    body = "    for x in xs:\n        print(x)\n        print(x * 2)\n"
    assert first_statement(body, text, len(text), PYTHON) == "    for x in xs:\n        print(x)"
    text = "int f(int n) {\n"
    body = "    if (n < 2) {\n        return n;\n    }\n"
    assert first_statement(body, text, len(text), C) == "    if (n < 2) {\n        return n;\n    }"  # braces close it


def test_blank_lines_before_the_statement_belong_to_it() -> None:
    text = "def f(x):"
    assert first_statement("\n    y = x\n    return y", text, len(text), PYTHON) == "\n    y = x"


def test_the_cut_keeps_the_line_break_the_insertion_ended_with() -> None:
    text = "def f(x):\n\nprint(f(1))\n"
    start = text.index("\n") + 1
    assert cut_to_first_statement("    y = x\n    return y\n", text, start, PYTHON) == "    y = x\n"
    assert cut_to_first_statement("    return x", text, start, PYTHON) == "    return x"  # nothing to cut


def test_plain_text_has_no_statements_to_stop_at() -> None:
    text = "notes:\n"
    assert first_statement("one\ntwo\n", text, len(text), get_language("plaintext")) is None


class _Chars:
    """A tokenizer of one token per character, enough for a span end that decodes what was written."""

    def decode(self, ids: list[int], **_: object) -> str:
        return "".join(chr(i) for i in ids)


def test_the_span_end_of_a_body_comes_with_the_line_break_after_its_first_statement() -> None:
    text = "def f(x):\n\nprint(f(1))\n"
    start = text.index("\n") + 1
    slot = Slot(Spot(start, start, 32, "block"), 0, 32)
    first = TextEnd(slot, text, PYTHON, _Chars(), first=True)
    whole = TextEnd(slot, text, PYTHON, _Chars())
    written = [ord(c) for c in "    y = x * 2\n    return"]
    assert first.reached(written) and not whole.reached(written)
    assert not first.reached([ord(c) for c in "    y = (x *\n"])  # the bracket is still open


def test_the_bundled_model_stops_a_body_after_its_first_statement_and_sooner() -> None:
    from engine import Engine
    from tests.support.bundled_block import block_of_several_statements

    fill = block_of_several_statements(Engine.load("default"))
    whole, first = fill(first_statement=False), fill(first_statement=True)
    assert whole.edits[0].new_text.count("\n") >= 1  # the block: more than one statement
    assert first.edits[0].new_text == whole.edits[0].new_text.split("\n", 1)[0]
    assert first.stats.forward_passes < whole.stats.forward_passes
