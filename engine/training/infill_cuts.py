"""Where to cut a source file into prefix / middle / suffix for infill-shaped training examples.

Cuts mirror what the completion front end asks for: whole lines (block completion), the rest of a line
from a cursor (inline completion), a syntax node (an expression or a statement, found with Python's ast),
and an empty middle (nothing is missing: the model must answer with end-of-text only).
"""

from __future__ import annotations

import ast
import bisect
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

KINDS = ("lines", "rest_of_line", "node", "empty")
KIND_WEIGHTS = (0.40, 0.25, 0.30, 0.05)
MAX_MIDDLE_LINES = 12
_PIECE_START = re.compile(r"(?<=[\s(\[{,.=:])(?=\S)|(?<=\w)(?=[^\w\s])|(?<=[^\w\s])(?=\w)")


@dataclass(frozen=True)
class InfillCut:
    prefix: str
    middle: str
    suffix: str
    kind: str


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text) if m.end() < len(text)]


def node_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) str offsets of the statements and expressions of a parseable file; [] otherwise.

    ast reports columns as UTF-8 byte offsets, converted here to code-point offsets.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    encoded = [line.encode("utf-8") for line in lines]

    def to_offset(lineno: int, col: int) -> int:
        row = lineno - 1
        if row >= len(lines):
            return len(text)
        return offsets[row] + len(encoded[row][:col].decode("utf-8", errors="ignore"))

    spans = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.stmt, ast.expr)) and getattr(node, "end_lineno", None) is not None:
            start = to_offset(node.lineno, node.col_offset)
            end = to_offset(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
            if end > start:
                spans.add((start, end))
    return sorted(spans)


def _cut(text: str, start: int, end: int, kind: str) -> InfillCut:
    return InfillCut(text[:start], text[start:end], text[end:], kind)


def _lines_cut(text: str, starts: list[int], rng: random.Random, lo: int, hi: int) -> InfillCut | None:
    first = bisect.bisect_left(starts, lo)
    last = bisect.bisect_right(starts, hi) - 1
    if last <= first:
        return None
    for _ in range(4):
        a = rng.randrange(first, last)
        count = min(1 + int(rng.expovariate(1 / 2.5)), MAX_MIDDLE_LINES, last - a)
        end = starts[a + count] if a + count < len(starts) else len(text)
        if text[starts[a] : end].strip():
            break
    return _cut(text, starts[a], end, "lines")


def _rest_of_line_cut(text: str, starts: list[int], rng: random.Random, lo: int, hi: int) -> InfillCut | None:
    first = bisect.bisect_left(starts, lo)
    last = bisect.bisect_right(starts, hi) - 1
    for _ in range(4):
        if last <= first:
            return None
        row = rng.randrange(first, last)
        line_end = text.find("\n", starts[row])
        line_end = len(text) if line_end < 0 else line_end
        line = text[starts[row] : line_end]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        cursors = [m.start() for m in _PIECE_START.finditer(line) if m.start() >= indent]
        if rng.random() < 0.2 or not cursors:
            cursors = list(range(indent, len(line)))
        if cursors:
            return _cut(text, starts[row] + rng.choice(cursors), line_end, "rest_of_line")
    return None


def _node_cut(
    text: str, spans: list[tuple[int, int]], rng: random.Random, lo: int, hi: int, max_chars: int
) -> InfillCut | None:
    left = bisect.bisect_left(spans, (lo, lo))
    right = bisect.bisect_right(spans, (hi, hi))
    candidates = [s for s in spans[left:right] if s[1] <= hi and s[1] - s[0] <= max_chars]
    if not candidates:
        return None
    start, end = rng.choice(candidates)
    return _cut(text, start, end, "node")


def choose_cut(
    text: str,
    rng: random.Random,
    window: tuple[int, int],
    spans: Callable[[], list[tuple[int, int]]] | None = None,
    starts: list[int] | None = None,
    max_middle_chars: int = 400,
) -> InfillCut:
    """A cut whose middle lies inside `window` (str offsets); falls back to a line cut, then to empty.

    `spans` is called only when a node cut is drawn (parsing a large file is the costly part)."""
    lo, hi = window
    starts = line_starts(text) if starts is None else starts
    kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
    cut: InfillCut | None = None
    if kind == "node" and spans is not None:
        cut = _node_cut(text, spans(), rng, lo, hi, max_middle_chars)
    elif kind == "rest_of_line":
        cut = _rest_of_line_cut(text, starts, rng, lo, hi)
    if cut is None and kind != "empty":
        cut = _lines_cut(text, starts, rng, lo, hi)
    if cut is None:
        first = bisect.bisect_left(starts, lo)
        last = bisect.bisect_right(starts, hi)
        point = starts[rng.randrange(first, last)] if last > first else lo
        cut = _cut(text, point, point, "empty")
    return cut
