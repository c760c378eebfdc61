"""What the headless-Neovim tests share: the sample file, the ghost text the plugin shows, and what Tab
must leave in the buffer (compared with exactly what the server sent, read from the request tap)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nvim_session import NvimSession

# Completion and infill happen inside the docstring: there a random tiny checkpoint's text still
# parses, so the server (which drops edits that add parse errors) reliably has something to offer.
SOURCE = '''import os


def list_python_files(folder):
    """Names of the Python files in folder.

    The names come back sorted, without the folder part.
    Hidden files are included.
    """
    result = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            result.append(name)
    return result
'''
COMPLETION_LINE, TYPED = 8, " and"
INFILL_FIRST, INFILL_LAST = 7, 8
GHOST_TIMEOUT_S = 40.0  # first answer includes the model load (~10 s alone, more on a busy machine)


def offset(text: str, line: int, character: int) -> int:
    """Offset of an LSP position in `text` (the fixture is ASCII, so every encoding agrees)."""
    lines = text.split("\n")
    return sum(len(item) + 1 for item in lines[:line]) + character


def apply_text_edits(text: str, edits: list[dict[str, Any]]) -> str:
    spans = [
        (
            offset(text, e["range"]["start"]["line"], e["range"]["start"]["character"]),
            offset(text, e["range"]["end"]["line"], e["range"]["end"]["character"]),
            e["newText"],
        )
        for e in edits
    ]
    for start, end, new_text in sorted(spans, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


def shown_item(tap: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The item on screen: the first non-empty one of the newest answer that had any."""
    for entry in reversed(tap["inline"]):
        result = entry.get("result") or {}
        items = result.get("items", result) if isinstance(result, dict) else result
        items = [
            item for item in items or [] if isinstance(item.get("insertText"), str) and item["insertText"]
        ]
        if items:
            return items[0], entry["params"]
    raise AssertionError(f"the server sent no non-empty inline completion item: {tap['inline']!r}")


def expected_after_accept(text: str, item: dict[str, Any], params: dict[str, Any]) -> str:
    if item.get("range"):
        return apply_text_edits(text, [{"range": item["range"], "newText": item["insertText"]}])
    position = params["position"]
    return apply_text_edits(
        text, [{"range": {"start": position, "end": position}, "newText": item["insertText"]}]
    )


def wait_for_ghost(session: NvimSession) -> None:
    session.wait_for(session.visible, GHOST_TIMEOUT_S, "ghost text to appear")


def type_at_end_of_line(session: NvimSession, line: int, typed: str) -> None:
    """Appends `typed` to `line` (1-based) in insert mode, as a user writing on would."""
    session.nvim.command(f"call cursor({line}, 1)")
    session.nvim.input("A" + typed)
    session.wait_for(lambda: session.mode() == "i" and typed in session.lines()[line - 1], 5, "insert mode")


def show_ghost(session: NvimSession, line: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Types TYPED at the end of `line` and waits for the ghost text: (the text before any of it is
    accepted, the item shown, the request it answered)."""
    type_at_end_of_line(session, line, TYPED)
    before = session.text()
    wait_for_ghost(session)
    item, params = shown_item(session.tap())
    return before, item, params


def type_wait_and_accept(session: NvimSession, line: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Types TYPED at the end of `line`, waits for the ghost text, accepts it with Tab and checks that the
    buffer holds exactly what the server sent; returns the item and its request's params."""
    before, item, params = show_ghost(session, line)
    session.nvim.input("<Tab>")
    session.wait_for(lambda: session.text() != before, 5, "the accepted suggestion in the buffer")
    assert session.text() == expected_after_accept(before, item, params)
    return item, params


def ghost_after_typing(
    make_session: Any, source_file: Path, renderer: str
) -> tuple[NvimSession, str, dict[str, Any], dict[str, Any]]:
    """A session whose user typed `TYPED` on the completion line and sees ghost text: (session, the text
    before any of it is accepted, the item shown, the request it answered)."""
    session = make_session(renderer)
    session.open(source_file)
    return (session, *show_ghost(session, COMPLETION_LINE))


def still_ahead(session: NvimSession, item: dict[str, Any]) -> str:
    """The part of `item` after the cursor."""
    row, col = session.nvim.current.window.cursor
    line = session.lines()[row - 1]
    typed = line[item["range"]["start"]["character"] : col] if item.get("range") else ""  # an ASCII line
    assert item["insertText"].startswith(typed), (item, line, col)
    return item["insertText"][len(typed) :]
