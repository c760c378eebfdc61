"""Incremental sync: the text after LSP range edits equals the edits applied to the client's copy, on emoji
and CJK text."""

from __future__ import annotations

import random

import pytest

from lsp_server.documents import DocumentStore, TextChange
from lsp_server.positions import code_units, offset_at, position_at

SOURCE = (
    "def greet(name):\n"
    "    msg = '你好, ' + name + ' 😀🎉'\n"
    "    return msg  # 注释 👍\n"
    "\n"
    "class Ünïcode:\n"
    "    value = '𝔘𝔫𝔦'\n"
)


def _lsp(text: str, offset: int, encoding: str) -> tuple[int, int]:
    return position_at(text, offset, encoding)  # type: ignore[arg-type]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_incremental_edits_give_the_clients_text(encoding: str) -> None:
    store = DocumentStore()
    store.encoding = encoding  # type: ignore[assignment]
    document = store.open("file:///t.py", "python", 1, SOURCE)
    rng = random.Random(7)
    snippets = ["😀", "你好", "x = 1\n", "\n    ", "'𝔘'", "", "é(", ")"]
    expected = SOURCE
    for version in range(2, 60):
        start = rng.randrange(len(expected) + 1)
        end = min(len(expected), start + rng.randrange(4))
        new = rng.choice(snippets)
        change = TextChange(new, _lsp(expected, start, encoding), _lsp(expected, end, encoding))
        store.change("file:///t.py", version, [change])
        expected = expected[:start] + new + expected[end:]
        assert document.text == expected
    assert document.version == 59


def test_several_changes_in_one_notification_apply_in_order() -> None:
    store = DocumentStore()
    document = store.open("file:///t.py", "python", 1, "a = '😀'\n")
    store.change(
        "file:///t.py",
        2,
        [
            TextChange("b", (0, 0), (0, 1)),  # a -> b
            TextChange("你", (0, 5), (0, 7)),  # the emoji is two UTF-16 units
            TextChange("x = 2\n", (1, 0), (1, 0)),
        ],
    )
    assert document.text == "b = '你'\nx = 2\n"
    store.change("file:///t.py", 3, [TextChange("print(1)\n")])
    assert document.text == "print(1)\n"


def test_positions_count_code_units_of_the_encoding() -> None:
    line = "s = '😀你'"
    assert (
        code_units(line, "utf-16") == 9
        and code_units(line, "utf-8") == 13
        and code_units(line, "utf-32") == 8
    )
    text = line + "\nnext\n"
    end_of_emoji = line.index("😀") + 1
    assert position_at(text, end_of_emoji, "utf-16") == (0, 7)
    assert position_at(text, end_of_emoji, "utf-8") == (0, 9)
    assert offset_at(text, 0, 7, "utf-16") == end_of_emoji
    assert offset_at(text, 0, 99, "utf-16") == len(line)  # clamps to the line's end
    assert offset_at(text, 1, 2, "utf-16") == len(line) + 3
    assert offset_at(text, 9, 0, "utf-16") == len(text)


def test_unknown_document_is_a_clear_error() -> None:
    with pytest.raises(LookupError, match="file:///nope.py is not open"):
        DocumentStore().get("file:///nope.py")


def test_crlf_lines_clamp_before_the_carriage_return() -> None:
    store = DocumentStore()
    document = store.open("file:///crlf.py", "python", 1, "a = 1\r\nb = 2\r\n")
    store.change("file:///crlf.py", 2, [TextChange("  # 😀", (0, 99), (0, 99))])
    assert document.text == "a = 1  # 😀\r\nb = 2\r\n"
