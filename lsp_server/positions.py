"""The server's view of the three coordinate systems it meets.

- `int` offsets: Python `str` indices (code points) into the document text; what `infill` speaks.
- LSP positions: (line, character), the character counted in the negotiated encoding's code units
  (UTF-16 unless the client offered UTF-8). Conversions are `infill.positions`'; this module only
  fixes the encoding names and clamps out-of-range input the way LSP asks.
- tree-sitter coordinates: UTF-8 byte offsets and (row, byte column) points, for `Tree.edit`.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from infill.positions import LineIndex, encoded_length

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
    return encoded_length(text, encoding)


def offset_at(text: str, line: int, character: int, encoding: Encoding) -> int:
    """Offset of an LSP position; past a line's end clamps to it, past the last line to the text's end."""
    if line < 0 or character < 0:
        raise ValueError(f"position ({line}, {character}) is negative")
    return LineIndex(text).from_lsp(line, character, encoding)


def position_at(text: str, offset: int, encoding: Encoding) -> tuple[int, int]:
    """LSP (line, character) of an offset (clamped into the text)."""
    return LineIndex(text).to_lsp(max(0, min(offset, len(text))), encoding)


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
