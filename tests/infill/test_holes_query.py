from __future__ import annotations

import pytest

from infill.holes import find_holes
from infill.languages import get_language
from infill.query import BadQuery, function_body_query, spots_from_query
from infill.windows import BODY_TOKENS

SOURCE = '''def parse(line):
    # <|hole|>


def render(node):
    # <|hole:24|>
    return node


NOTE = """
# <|hole|>
"""  # a marker inside a string is text, not a hole


def test_parse_arguments():
    assert parse("a") == ["a"]


def test_render():
    assert render(1) == 1
'''


def test_hole_markers_become_block_spots() -> None:
    spots = find_holes(SOURCE)
    assert [SOURCE[s.start : s.end] for s in spots] == ["# <|hole|>", "# <|hole:24|>"]
    assert [s.n_masks for s in spots] == [BODY_TOKENS, 24]
    assert all(s.kind == "block" for s in spots)
    assert SOURCE[spots[0].start - 4 : spots[0].start] == "    "


def test_crlf_hole_line() -> None:
    text = "def f():\r\n    # <|hole:5|>\r\n"
    (spot,) = find_holes(text)
    assert text[spot.start : spot.end] == "# <|hole:5|>"


def test_function_regex_selects_matching_bodies() -> None:
    query = function_body_query("^test_", get_language("python"))
    spots = spots_from_query(SOURCE, query)
    bodies = [SOURCE[s.start : s.end] for s in spots]
    assert bodies == ['assert parse("a") == ["a"]', "assert render(1) == 1"]


def test_nested_captures_keep_the_outermost() -> None:
    text = "def outer():\n    def inner():\n        return 1\n    return inner\n"
    spots = spots_from_query(text, "(function_definition body: (block) @body)")
    assert len(spots) == 1 and text[spots[0].start : spots[0].end].startswith("def inner")


@pytest.mark.parametrize(
    ("query", "message"),
    [("(function_definition", "does not compile"), ("(identifier) @name", "@spot or @body")],
)
def test_bad_queries_name_the_problem(query: str, message: str) -> None:
    with pytest.raises(BadQuery, match=message):
        spots_from_query(SOURCE, query)


def test_bad_function_regex() -> None:
    with pytest.raises(BadQuery, match="function-regex"):
        function_body_query("(", get_language("python"))
