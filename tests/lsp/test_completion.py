"""Shaping model replacements into LSP inline items: single-line ranges and selectedCompletionInfo."""

from __future__ import annotations

from lsprotocol import types

from lsp_server.completion import build_query, inline_items, to_suggestion
from lsp_server.inference import Replacement


def _pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def test_insertion_at_the_cursor_has_an_empty_range_in_utf16_units() -> None:
    text = "s = '😀'; t = \nnext\n"
    cursor = text.index("\n")
    query = build_query(text, _pos(0, cursor + 1), "utf-16")  # the emoji counts two units
    assert query.offset == cursor
    suggestion = to_suggestion(query, Replacement(cursor, cursor, "1\n"), multiline=False)
    assert suggestion is not None and suggestion.insert_text == "1"
    [item] = inline_items("file:///a.py", query, [suggestion], "utf-16", ["id1"])
    assert item.range == types.Range(_pos(0, cursor + 1), _pos(0, cursor + 1))
    assert item.command is not None and item.command.arguments == [{"uri": "file:///a.py", "itemId": "id1"}]


def test_replacements_that_cannot_be_shown_inline_are_dropped() -> None:
    text = "x = (\n    1,\n)\n"
    query = build_query(text, _pos(0, 5), "utf-16")
    assert to_suggestion(query, Replacement(5, 12, "2"), multiline=True) is None  # spans a line break
    assert to_suggestion(query, Replacement(5, 5, "   "), multiline=True) is None  # whitespace only


def test_selected_completion_is_extended_with_the_same_range() -> None:
    text = "import os\nos.pa\n"
    selected = types.SelectedCompletionInfo(range=types.Range(_pos(1, 3), _pos(1, 5)), text="path")
    query = build_query(text, _pos(1, 5), "utf-16", selected)
    assert query.text == "import os\nos.path\n" and query.offset == len("import os\nos.path")
    suggestion = to_suggestion(query, Replacement(query.offset, query.offset, ".join(a, b)"), multiline=True)
    assert suggestion is not None and suggestion.insert_text == "path.join(a, b)"
    [item] = inline_items("file:///a.py", query, [suggestion], "utf-16", ["i"])
    assert item.range == selected.range
    assert to_suggestion(query, Replacement(query.offset - 1, query.offset, "x"), multiline=True) is None
