"""Conversions between the three coordinate systems the server meets.

- `int` offsets: Python `str` indices (code points) into the document text; what `infill` speaks.
- LSP positions: (line, character) with the character counted in the negotiated encoding's code units
  (UTF-16 unless the client offered UTF-8 or UTF-32).
- tree-sitter coordinates: UTF-8 byte offsets and (row, byte column) points.

Lines end at "\\n"; a "\\r" before it belongs to the line's content, which is what LSP clients expect
for "\\r\\n" files as long as no position points between the two characters.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Encoding = Literal["utf-8", "utf-16", "utf-32"]


class BytePoint(NamedTuple):
    """A tree-sitter location: absolute byte offset plus (row, byte column)."""

    byte: int
    row: int
    column: int


def normalize_encoding(value: object) -> Encoding:
    """The encoding name pygls negotiated, as one of our literals (UTF-16 when unknown)."""
    text = str(getattr(value, "value", value) or "utf-16").lower()
    if text in ("utf-8", "utf-32"):
        return text  # type: ignore[return-value]
    return "utf-16"


def code_units(text: str, encoding: Encoding) -> int:
    """Length of `text` in the code units of `encoding`."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def line_start(text: str, line: int) -> int:
    """Offset of the first character of `line` (0-based); len(text) past the last line."""
    start = 0
    for _ in range(line):
        newline = text.find("\n", start)
        if newline < 0:
            return len(text)
        start = newline + 1
    return start


def _line_end(text: str, start: int) -> int:
    newline = text.find("\n", start)
    return len(text) if newline < 0 else newline


def offset_at(text: str, line: int, character: int, encoding: Encoding) -> int:
    """Offset of an LSP position; characters past the line's end clamp to the end (as LSP says)."""
    if line < 0 or character < 0:
        raise ValueError(f"position ({line}, {character}) is negative")
    start = line_start(text, line)
    end = _line_end(text, start)
    if encoding == "utf-32":
        return min(start + character, end)
    units = 0
    offset = start
    while offset < end:
        width = code_units(text[offset], encoding)
        if units + width > character:
            break
        units += width
        offset += 1
    return offset


def position_at(text: str, offset: int, encoding: Encoding) -> tuple[int, int]:
    """LSP (line, character) of an offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return line, code_units(text[start:offset], encoding)


def byte_point(text: str, offset: int) -> BytePoint:
    """tree-sitter coordinates of an offset."""
    start = text.rfind("\n", 0, offset) + 1
    row = text.count("\n", 0, offset)
    column = len(text[start:offset].encode("utf-8"))
    return BytePoint(len(text[:start].encode("utf-8")) + column, row, column)


def end_point_after(start: BytePoint, inserted: str) -> BytePoint:
    """Where text inserted at `start` ends, without re-encoding the whole document."""
    encoded = inserted.encode("utf-8")
    newlines = inserted.count("\n")
    if newlines == 0:
        return BytePoint(start.byte + len(encoded), start.row, start.column + len(encoded))
    last_line = inserted[inserted.rfind("\n") + 1 :].encode("utf-8")
    return BytePoint(start.byte + len(encoded), start.row + newlines, len(last_line))
