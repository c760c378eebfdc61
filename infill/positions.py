"""Conversions between the position systems infill meets.

- str offsets (code points): infill's own positions, `text[start:end]`;
- LSP positions: 0-based (line, character) where a character counts UTF-16 code units (the LSP
  default) or UTF-8 bytes (`positionEncoding: "utf-8"`), or code points ("utf-32");
- tree-sitter byte offsets and points: (row, column) with the column in UTF-8 bytes.

Lines are separated by "\n"; a "\r" before it belongs to the line break, so an LSP character past the
end of a line's content clamps to the "\r".
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

Encoding = str  # "utf-16" | "utf-8" | "utf-32"

_UNITS = {"utf-16": 2, "utf-8": 1, "utf-32": 4}


def _unit_length(char: str, encoding: Encoding) -> int:
    code = ord(char)
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    if encoding == "utf-32":
        return 1
    raise ValueError(f"unknown position encoding {encoding!r} (use one of {', '.join(_UNITS)})")


def encoded_length(text: str, encoding: Encoding = "utf-16") -> int:
    """Length of `text` in the code units of `encoding`."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    raise ValueError(f"unknown position encoding {encoding!r} (use one of {', '.join(_UNITS)})")


@dataclass(frozen=True)
class LineIndex:
    """Line starts of one text, for repeated conversions without rescanning it."""

    text: str
    starts: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        starts = [0]
        index = self.text.find("\n")
        while index != -1:
            starts.append(index + 1)
            index = self.text.find("\n", index + 1)
        object.__setattr__(self, "starts", tuple(starts))

    @property
    def line_count(self) -> int:
        """Number of lines; a final line break does not open a counted line."""
        if len(self.starts) > 1 and self.starts[-1] == len(self.text):
            return len(self.starts) - 1
        return len(self.starts)

    def line_of(self, offset: int) -> int:
        """0-based line holding the str offset."""
        return bisect.bisect_right(self.starts, offset) - 1

    def line_start(self, line: int) -> int:
        return self.starts[line]

    def line_end(self, line: int, *, with_break: bool = False) -> int:
        """End of the line's content (before "\r\n" / "\n"), or after its break with `with_break`."""
        nxt = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        if with_break or nxt == self.starts[line]:
            return nxt
        end = nxt
        if end > self.starts[line] and self.text[end - 1] == "\n":
            end -= 1
            if end > self.starts[line] and self.text[end - 1] == "\r":
                end -= 1
        return end

    def line_text(self, line: int) -> str:
        return self.text[self.starts[line] : self.line_end(line)]

    def to_lsp(self, offset: int, encoding: Encoding = "utf-16") -> tuple[int, int]:
        """str offset -> (line, character) in `encoding` units."""
        if not 0 <= offset <= len(self.text):
            raise ValueError(f"offset {offset} is outside the text (length {len(self.text)})")
        line = self.line_of(offset)
        return line, encoded_length(self.text[self.starts[line] : offset], encoding)

    def from_lsp(self, line: int, character: int, encoding: Encoding = "utf-16") -> int:
        """(line, character) -> str offset; a character past the line's end clamps to it (as LSP says).

        A line past the last one maps to the end of the text. A character that falls inside a
        surrogate pair or a multi-byte sequence rounds down to the code point that holds it.
        """
        if line < 0 or character < 0:
            raise ValueError(f"negative position ({line}, {character})")
        if line >= len(self.starts):
            return len(self.text)
        start, end = self.starts[line], self.line_end(line)
        units = 0
        for offset in range(start, end):
            units += _unit_length(self.text[offset], encoding)
            if units > character:
                return offset
        return end

    def to_byte(self, offset: int) -> int:
        """str offset -> UTF-8 byte offset (tree-sitter)."""
        return len(self.text[:offset].encode("utf-8"))

    def from_byte(self, byte: int) -> int:
        """UTF-8 byte offset -> str offset; a byte inside a multi-byte character rounds down."""
        return len(self.text.encode("utf-8")[:byte].decode("utf-8", errors="ignore"))

    def to_point(self, offset: int) -> tuple[int, int]:
        """str offset -> tree-sitter point (row, byte column)."""
        return self.to_lsp(offset, "utf-8")

    def from_point(self, row: int, column: int) -> int:
        """tree-sitter point (row, byte column) -> str offset."""
        return self.from_lsp(row, column, "utf-8")


def offset_to_lsp(text: str, offset: int, encoding: Encoding = "utf-16") -> tuple[int, int]:
    return LineIndex(text).to_lsp(offset, encoding)


def lsp_to_offset(text: str, line: int, character: int, encoding: Encoding = "utf-16") -> int:
    return LineIndex(text).from_lsp(line, character, encoding)


def offset_to_byte(text: str, offset: int) -> int:
    return len(text[:offset].encode("utf-8"))


def byte_to_offset(text: str, byte: int) -> int:
    return len(text.encode("utf-8")[:byte].decode("utf-8", errors="ignore"))


class ByteMap:
    """str offset <-> UTF-8 byte offset for one text (tree-sitter nodes of one tree).

    Each lookup slices and re-encodes in C, which beats a per-character table in Python for the few
    lookups a plan or a parse check makes, even on large files.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii = text.isascii()
        self._encoded = text.encode("utf-8")

    def to_byte(self, offset: int) -> int:
        return offset if self._ascii else len(self.text[:offset].encode("utf-8"))

    def to_offset(self, byte: int) -> int:
        if self._ascii:
            return byte
        return len(self._encoded[:byte].decode("utf-8", errors="ignore"))
