"""The current file's own outline: signatures of the functions and classes the canvas's window cuts off."""

from __future__ import annotations

from infill.context.chunks import Chunk
from infill.context.python_defs import module_info
from infill.positions import LineIndex


def outline_beyond(text: str, offset: int, path: str, window_chars: int) -> list[Chunk]:
    """One chunk with the signatures of the functions and classes of `text` that start more than
    `window_chars` characters from `offset` (about where the canvas's window ends); none for a short file."""
    if len(text) <= 2 * window_chars:
        return []
    lines = LineIndex(text)
    outside = [
        d for d in sorted(module_info(text).definitions.values(), key=lambda d: d.line)
        if d.kind != "constant" and abs(lines.line_start(min(d.line, lines.line_count - 1)) - offset) > window_chars
    ]
    if not outside:
        return []
    return [Chunk(path, "\n".join(d.brief for d in outside), "outline", outside[0].line, 1.0)]
