"""When a span written left to right is complete (infill.span_end): exactly where post-processing would
cut it at a point more text cannot move."""

from __future__ import annotations

from infill.canvas import Slot
from infill.languages import get_language
from infill.postprocess import shape_text
from infill.span_end import span_complete
from infill.spots import Spot

PYTHON = get_language("python")


def test_a_hole_is_complete_once_a_line_leaves_its_block() -> None:
    text = "def f(text):\n    # <|hole|>\n\n\ndef g():\n    pass\n"
    slot = Slot(Spot(17, 27, 16, "block"), 0, 16)
    assert not span_complete("return text[::-1]", slot, text, PYTHON)
    assert not span_complete("return text[::-1]\n\n", slot, text, PYTHON)  # blank lines decide nothing
    assert not span_complete("if text:\n        return text", slot, text, PYTHON)
    assert span_complete("return text[::-1]\n\n# Test", slot, text, PYTHON)


def test_a_block_insertion_is_complete_once_it_leaves_the_body_or_loops() -> None:
    text = "def f(x):\n\nprint(f(1))\n"
    slot = Slot(Spot(9, 9, 32, "block"), 0, 32)
    assert not span_complete("\n    y = x * 2\n    return y", slot, text, PYTHON)
    assert span_complete("\n    y = x * 2\n    return y\nprint", slot, text, PYTHON)
    assert span_complete("\n    x += 1\n    x += 1\n    x += 1\n", slot, text, PYTHON)


def test_a_span_is_complete_once_it_writes_the_lines_after_it_again() -> None:
    text = "def area(w, h):\n    # <|hole|>\n    return result_of_the_computation\n"
    slot = Slot(Spot(20, 30, 16, "block"), 0, 16)
    assert not span_complete("result_of_the_computation = w * h\n", slot, text, PYTHON)
    assert not span_complete("x = w * h\n    return result_of_the_computation", slot, text, PYTHON)  # unfinished
    assert span_complete("x = w * h\n    return result_of_the_computation\n", slot, text, PYTHON)


def test_a_one_line_insertion_with_text_after_the_cursor_is_left_to_its_line_break_stop() -> None:
    text = "x = (\nprint(x)\n"
    slot = Slot(Spot(4, 4, 8, "line"), 0, 8)
    assert not span_complete("1\nprint(x)\nprint(x)\nprint(x)\n", slot, text, PYTHON)


def test_a_line_that_may_grow_ends_with_its_first_line_unless_that_line_opens_a_block() -> None:
    text = "def f(x):\n    \n"
    slot = Slot(Spot(14, 14, 8, "line"), 0, 8)
    assert not span_complete("y = x * 2", slot, text, PYTHON)  # the line is not written yet
    assert span_complete("y = x * 2\n    return y", slot, text, PYTHON)
    assert not span_complete("if x:\n        return 1", slot, text, PYTHON)  # the body goes on
    assert span_complete("if x:\n        return 1\n    return 2", slot, text, PYTHON)


def test_a_header_line_above_its_existing_body_ends_with_its_first_line() -> None:
    text = "def f(xs):\n    total = 0\n\n        total += x\n    return total\n"
    cursor = text.index("\n\n") + 1
    slot = Slot(Spot(cursor, cursor, 8, "line"), 0, 8)
    assert span_complete("    for x in xs:\n        total -= x", slot, text, PYTHON)  # the body is below
    shaped = shape_text("    for x in xs:\n        total -= x", slot, text, PYTHON)
    assert shaped.text == "    for x in xs:"


def test_a_line_is_not_complete_while_its_healed_lead_is_being_written() -> None:
    """With the cursor on an empty indented line, the span starts with the line break and indentation
    before it (the healed lead). Its line break is not the end of the line the span writes: taken for one,
    the engine ended every such completion right after the lead, and the suggestion came out empty."""
    text = "def f(x):\n    y = x * 2\n        \n    return y\n"
    cursor = text.index("        \n") + 8
    slot = Slot(Spot(cursor, cursor, 16, "line"), 0, 16, lead="\n        ")
    assert not span_complete("\n       ", slot, text, PYTHON)  # the lead's first token
    assert not span_complete("\n        ", slot, text, PYTHON)
    assert not span_complete("\n        y += 1", slot, text, PYTHON)
    assert span_complete("\n        y += 1\n        y", slot, text, PYTHON)


class _Chars:
    """One token per character: enough for a span end that decodes what was written."""

    def decode(self, ids: list[int], **_: object) -> str:
        return "".join(chr(i) for i in ids)


def _chars(text: str) -> list[int]:
    return [ord(c) for c in text]


def test_a_span_may_not_end_short_of_what_more_text_completes() -> None:
    """At the end of a file (nothing after the cursor to close what the edit opens): an open bracket, a
    block header without its body, a statement cut mid-way keep the span writing; a complete statement,
    an error inside the text (a retry's matter, not more text's) and the healed lead do not."""
    from infill.span_end import TextEnd

    text = "class Box:\n    def size(self):\n        return 1\n\n"
    slot = Slot(Spot(len(text), len(text), 32, "block"), 0, 32)
    end = TextEnd(slot, text, PYTHON, _Chars())
    assert not end.may_end(_chars("    def area(self):"))
    assert not end.may_end(_chars("    def area(self):\n        value = self.measure("))
    assert not end.may_end(_chars("    def area(self):\n        value = self.measure(\n            1,\n"))
    assert end.may_end(_chars("    def area(self):\n        return self.measure(1)"))
    assert end.may_end(_chars("    def area(self):\n        return self.measure(1)\n"))
    assert end.may_end(_chars("    def area(self) x:\n        return 1"))  # broken before its end
    assert end.may_end([])
    led = TextEnd(Slot(Spot(len(text), len(text), 32, "block"), 0, 32, lead="\n"), text, PYTHON, _Chars())
    assert led.may_end(_chars("\n"))


def test_text_after_the_cursor_that_closes_the_bracket_lets_the_span_end() -> None:
    from infill.span_end import TextEnd

    text = "total = measure(\n    1, 2)\n"
    cursor = text.index("\n") + 1
    end = TextEnd(Slot(Spot(cursor, cursor, 16, "line"), 0, 16), text, PYTHON, _Chars())
    assert end.may_end(_chars("    0,\n"))


class _Never:
    def reached(self, written) -> bool:
        return False

    def may_end(self, written) -> bool:
        return True


def test_a_span_judging_a_rival_waits_for_the_verdict_on_both_texts() -> None:
    """The text there is the start of the rule's text: having spelled `Dependency` the span has kept the
    reference, but the rival's verdict is the next token (`Container`, or anything else)."""
    from infill.leads import TextReference
    from infill.span_end import Decided
    from tests.support.checkpoints import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    ids = {text: tokenizer.encode(text, add_special_tokens=False)
           for text in ("Dependency", "DependencyContainer", "Dependency(", "Depot")}
    end = Decided(TextReference("Dependency", tokenizer), TextReference("DependencyContainer", tokenizer), _Never())
    assert not end.reached(ids["Dependency"][:1])
    assert not end.reached(ids["Dependency"])
    assert end.reached(ids["DependencyContainer"]) and end.reached(ids["Dependency("]) and end.reached(ids["Depot"])
