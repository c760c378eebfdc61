"""The server's view of the two coordinate systems it meets.

- `int` offsets: Python `str` indices (code points) into the document text; what `infill` speaks.
- LSP positions: (line, character), the character counted in the negotiated encoding's code units
  (UTF-16 unless the client offered UTF-8). Conversions are `infill.positions`'; this module only
  fixes the encoding names and clamps out-of-range input the way LSP asks.
"""

from __future__ import annotations

from typing import Literal

from infill.positions import LineIndex, encoded_length

Encoding = Literal["utf-8", "utf-16", "utf-32"]


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
