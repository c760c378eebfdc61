from __future__ import annotations

from engine import SpecialTokens
from infill.canvas import Slot
from infill.languages import get_language
from infill.postprocess import (
    Shaped,
    balance_brackets,
    decode,
    finish,
    indent_unit,
    shape_text,
    span_ids,
    token_offsets,
    trim_suffix_echo,
)
from infill.repair import baseline, check_filled, remask_range
from infill.spots import Edit, Spot
from infill.worth_showing import drop_reason
from tests.support.checkpoints import tiny_tokenizer

PYTHON = get_language("python")
SPECIAL = SpecialTokens(mask_id=2, eos_id=0, pad_id=0, bos_id=1)


def test_span_is_cut_at_its_first_eos() -> None:
    assert span_ids([5, 6, 0, 7, 0, 0], SPECIAL) == [5, 6]
    assert span_ids([0, 5], SPECIAL) == []


def test_line_spot_keeps_one_line_and_drops_the_moved_indent() -> None:
    text = "def f(x):\n    \n"
    slot = Slot(Spot(14, 14, 8, "line"), 0, 8, lead="    ")
    shaped = shape_text("    return x + 1\n    y = 2", slot, text, PYTHON)
    assert shaped.text == "return x + 1"
    assert shaped.raw_start == 4


def test_block_completion_stops_where_the_indentation_leaves_the_body() -> None:
    text = "def f(x):\n\nprint(f(1))\n"
    slot = Slot(Spot(9, 9, 32, "block"), 0, 32)
    shaped = shape_text("\n    y = x * 2\n    return y\nprint(f(2))\n", slot, text, PYTHON)
    assert shaped.text == "\n    y = x * 2\n    return y"


def test_a_hole_marker_fill_stops_where_the_indentation_leaves_its_block() -> None:
    text = "def f(text):\n    # <|hole|>\n"
    slot = Slot(Spot(17, 27, 16, "block"), 0, 16)
    raw = "return text[::-1]\n\n# Test the function\nprint(f('ab'))"
    assert shape_text(raw, slot, text, PYTHON).text == "return text[::-1]"


def test_regenerated_lines_end_with_the_line_breaks_they_replace() -> None:
    text = "a = 1\nb = 2\n"
    slot = Slot(Spot(6, 12, 8, "line"), 0, 8)
    assert shape_text("b = 3", slot, text, PYTHON).text == "b = 3\n"
    assert shape_text("b = 3\n\n\n\n  ", slot, text, PYTHON).text == "b = 3\n"
    blank_after = "def f():\n    pass\n\n\nx = 1\n"
    slot = Slot(Spot(0, 20, 16, "block"), 0, 16)
    assert (
        shape_text("def f():\n    return 1", slot, blank_after, PYTHON).text == "def f():\n    return 1\n\n\n"
    )
    crlf = "a = 1\r\nb = 2\r\n"
    slot = Slot(Spot(7, 14, 8, "line"), 0, 8)
    assert shape_text("b = 3", slot, crlf, PYTHON).text == "b = 3\r\n"


def test_a_line_repeated_three_times_is_cut_to_one() -> None:
    text = "def f(x):\n\nprint(f(1))\n"
    slot = Slot(Spot(9, 9, 32, "block"), 0, 32)
    looped = "\n    x += 1\n    x += 1\n    x += 1\n    x += 1\n    return x"
    assert shape_text(looped, slot, text, PYTHON).text == "\n    x += 1"
    twice = "\n    x += 1\n    x += 1\n    return x"
    assert shape_text(twice, slot, text, PYTHON).text == twice


def test_trailing_echo_of_the_suffix_is_removed() -> None:
    suffix = "\n    return total\n\nprint(1)\n"
    assert trim_suffix_echo("total = a + b\n    return total", suffix) == "total = a + b"
    assert trim_suffix_echo("return total", suffix) == ""
    assert trim_suffix_echo("total = 0", suffix) == "total = 0"


def test_a_result_that_only_repeats_what_follows_is_dropped() -> None:
    text = "foo()\n"
    assert drop_reason(")", text, 4) is not None
    assert drop_reason("   ", text, 4) == "empty result"
    assert drop_reason("a, b", text, 4) is None
    body = "def f(x):\n    y = x + 1\n    \n"
    assert drop_reason("y = x + 1", body, 28, 28) == "the result repeats the line above"
    assert drop_reason("return y", body, 28, 28) is None


def test_a_closer_repeats_another_only_at_the_same_indentation() -> None:
    """`}` lines follow each other at falling indentation: a closer one level out is no repeat of the
    closer above it or of the one after the cursor, the same closer at the same indentation is."""
    nested = "function f(a) {\n    if (a) {\n        g();\n    }\n\n"
    cursor = len(nested) - 1
    assert drop_reason("}", nested, cursor, cursor) is None
    assert drop_reason("    }", nested, cursor, cursor) == "the result repeats the line above"
    before_closer = "function f(a) {\n    for (;;) {\n        g();\n\n    }\n}\n"
    cursor = before_closer.index("\n\n") + 1
    assert drop_reason("        }", before_closer, cursor, cursor) is None
    assert drop_reason("    }", before_closer, cursor, cursor) == "the result repeats the text after the spot"
    typed = "function f(a) {\n    if (a) {\n        g();\n    \n}\n"  # the cursor after typed indentation
    cursor = typed.index("    \n") + 4
    assert drop_reason("}", typed, cursor, cursor) is None
    assert drop_reason("g();", typed, cursor, cursor) == "the result repeats the line above"


def test_lines_inserted_before_a_line_of_text_end_with_a_line_break() -> None:
    """A block spot at column 0 of a line that holds text (the published oracle-length setup: the cursor
    at the start of the line after the gap) puts whole lines before it; without the break the last one
    would run into that line."""
    text = "def f(xs):\n    total = 0\n        total += 1\n    return total\n"
    at = text.index("        total +=")
    _, new_text = finish("    for x in xs:", Slot(Spot(at, at, 16, "block"), 0, 16), text, PYTHON)
    assert new_text == "    for x in xs:\n"
    inline = "x = compute(a)\n"  # mid-line: no break
    _, new_text = finish("b, ", Slot(Spot(12, 12, 4, "line"), 0, 4), inline, PYTHON)
    assert not new_text.endswith("\n")


def test_closer_that_the_suffix_already_provides_is_cut() -> None:
    text = "total = compute()\n"
    assert balance_brackets(text, 16, 16, "a, b)", PYTHON) == "a, b"
    assert balance_brackets(text, 16, 16, "a, (b + c)", PYTHON) == "a, (b + c)"
    open_call = "total = compute(\n"
    assert balance_brackets(open_call, 16, 16, "a, b)", PYTHON) == "a, b)"
    assert balance_brackets(open_call, 16, 16, "a])", PYTHON) == "a"
    assert balance_brackets(text, 16, 16, 'x, ")"', PYTHON) == 'x, ")"'


def test_remask_range_covers_the_error_line_with_margin() -> None:
    raw = "a = 1\nb = (2\nc = 3"
    offsets = [0, 1, 3, 5, 6, 7, 9, 11, 12, 13, 15, 17]
    lo, hi = remask_range(offsets, 16, raw, raw.index("(2"), margin=1)
    assert lo == 3 and hi == 9
    assert offsets[lo + 1] <= raw.index("b") and offsets[hi - 1 - 1] >= raw.index("2")


def test_remask_range_at_the_end_reaches_into_the_eos_tail() -> None:
    raw = "x = f(1"
    offsets = [0, 1, 3, 5, 6]
    lo, hi = remask_range(offsets, 12, raw, len(raw), margin=2)
    assert lo == 0 and hi == 8


def test_remask_range_on_real_token_offsets() -> None:
    tokenizer = tiny_tokenizer()
    ids = list(tokenizer.encode("value = 1\nother = [2, \nlast = 3", add_special_tokens=False))
    raw = decode(tokenizer, ids)
    offsets = token_offsets(tokenizer, ids)
    lo, hi = remask_range(offsets, len(ids) + 4, raw, raw.index("["), margin=0)
    covered = decode(tokenizer, ids[lo:hi])
    assert "other = [2, " in covered and "value" not in covered and "last" not in covered


def test_parse_check_blames_the_result_that_adds_errors() -> None:
    text = "def f(x):\n    pass\n\ndef g(y):\n    pass\n"
    good = Edit(14, 18, "return x", ())
    bad = Edit(34, 38, "return (y", ())
    check = check_filled(text, [good, bad], baseline(text, PYTHON), PYTHON)
    assert check.added > 0
    assert check.where[0] is None and check.where[1] is not None
    clean = check_filled(text, [good, None], baseline(text, PYTHON), PYTHON)
    assert clean.added == 0


def test_parse_check_ignores_errors_the_original_already_had() -> None:
    text = "def broken(:\n    pass\n\nx = 1\n"
    original = baseline(text, PYTHON)
    assert original.count > 0
    check = check_filled(text, [Edit(23, 28, "x = 2\n", ())], original, PYTHON)
    assert check.added == 0


def test_results_take_the_files_indentation_style() -> None:
    tabbed = "def f(x):\n\tif x:\n\t\t\n\treturn x\n"
    cursor = tabbed.index("\t\t\n") + 2
    slot = Slot(Spot(cursor, cursor, 32, "block"), 0, 32, lead="\t\t")
    shaped = shape_text("\t\ty = 1\n        z = 2\n          w = 3", slot, tabbed, PYTHON)
    assert shaped.text == "y = 1\n\t\tz = 2\n\t\t  w = 3"
    spaced = "def g():\n    pass\n"
    slot = Slot(Spot(9, 18, 16, "block"), 0, 16)
    assert (
        shape_text("\tif True:\n\t\treturn 1", slot, spaced, PYTHON).text
        == "    if True:\n        return 1\n"
    )
    assert indent_unit(spaced) == "    " and indent_unit(tabbed) == "\t" and indent_unit("x = 1\n") is None


def test_raw_offset_maps_a_reindented_line_back_to_the_span() -> None:
    raw = "\tif True:\n\t\treturn (1\n"
    shaped = Shaped("    if True:\n        return (1\n", raw, 0)
    where = shaped.text.index("(")
    assert raw[shaped.raw_offset(where)] in "n ("
    assert shaped.raw_offset(where) > raw.index("\n")
    assert shaped.raw_offset(len(shaped.text)) <= len(raw)


def test_a_regenerated_range_stops_where_its_block_ends() -> None:
    text = "def mean(v):\n    total = sum(v)\n    return total / len(v)\n\n\ndef other():\n    pass\n"
    start, end = text.index("    total"), text.index("\n\n\ndef other") + 1
    slot = Slot(Spot(start, end, 24, "block"), 0, 24)
    written = "    return sum(v) / len(v)\n\ndef helper(v):\n    return v\n"
    assert shape_text(written, slot, text, PYTHON).text == "    return sum(v) / len(v)\n"
