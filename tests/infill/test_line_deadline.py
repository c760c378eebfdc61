"""llama-server's `t_max_predict_ms` rule as a span end: measured from the first written token, applied only
at a line break written after the limit, the lead's own line break not counted (a fake clock)."""

from __future__ import annotations

from infill.line_deadline import LineDeadline
from tests.support.checkpoints import tiny_tokenizer

TOKENIZER = tiny_tokenizer()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def ids(text: str) -> list[int]:
    return list(TOKENIZER.encode(text, add_special_tokens=False))


class Never:
    def reached(self, written: list[int]) -> bool:
        return False

    def may_end(self, written: list[int]) -> bool:
        return True


def test_the_limit_ends_the_span_at_the_first_line_break_after_it():
    clock = Clock()
    end = LineDeadline(250, "\n    ", TOKENIZER, Never(), clock)
    assert not end.reached([])  # nothing written yet: the clock has not started
    assert not end.reached(ids("\n    x"))  # the lead's line break is the prefix's, not written text
    clock.now += 10.0  # the limit passed long ago, but no line has ended since
    assert not end.reached(ids("\n    x = 1"))
    assert end.reached(ids("\n    x = 1\n"))  # the first line break written after the limit


def test_a_line_break_before_the_limit_does_not_end_the_span():
    clock = Clock()
    end = LineDeadline(250, "", TOKENIZER, Never(), clock)
    assert not end.reached(ids("a"))
    clock.now += 0.1
    assert not end.reached(ids("a\n"))  # 100 ms after the first token: within the limit
    clock.now += 0.2
    assert not end.reached(ids("a\nb"))  # past it, mid-line: writing goes on to the line's end
    assert end.reached(ids("a\nb\n"))


def test_past_the_limit_a_line_break_where_the_text_may_not_end_does_not_end_the_span():
    class Balanced(Never):  # as `TextEnd.may_end` refuses an open bracket
        def may_end(self, written: list[int]) -> bool:
            text = TOKENIZER.decode(written)
            return text.count("(") == text.count(")")

    clock = Clock()
    end = LineDeadline(250, "", TOKENIZER, Balanced(), clock)
    assert not end.reached(ids("x = f("))
    clock.now += 1.0
    assert not end.reached(ids("x = f(\n"))
    assert not end.reached(ids("x = f(\n    1,\n"))
    assert end.reached(ids("x = f(\n    1,\n)\n"))


def test_whether_the_span_may_end_is_its_own_end_s_to_say():
    class Refuses(Never):
        def may_end(self, written: list[int]) -> bool:
            return False

    assert not LineDeadline(250, "", TOKENIZER, Refuses(), Clock()).may_end(ids("a"))
    assert LineDeadline(250, "", TOKENIZER, None, Clock()).may_end(ids("a"))


def test_the_span_s_own_end_still_applies():
    class Done:
        def reached(self, written: list[int]) -> bool:
            return True

    assert LineDeadline(10_000, "", TOKENIZER, Done(), Clock()).reached(ids("a"))


def test_the_bundled_model_past_the_limit_stops_at_the_first_line_end_that_parses():
    """A limit long past at the first token (1 ms): the block the model writes without one, cut at its
    first line end where the text parses, in fewer forwards; the same edit at any limit it never reaches."""
    from engine import Engine
    from tests.support.bundled_block import block_of_several_statements

    fill = block_of_several_statements(Engine.load("default"))
    whole, limited, never = fill(), fill(line_deadline_ms=1), fill(line_deadline_ms=600_000)
    assert whole.edits[0].new_text.count("\n") >= 1
    assert limited.edits[0].new_text == whole.edits[0].new_text.split("\n", 1)[0]
    assert limited.stats.forward_passes < whole.stats.forward_passes
    assert never.edits[0].new_text == whole.edits[0].new_text
