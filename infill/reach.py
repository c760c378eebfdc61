"""How far from a place in a text the model's context can reach, and the text cut to that reach before
anything parses or tokenizes it.

A body may carry megabytes (up to `--max-body`): a 100,000-line prompt, a document with its spots at the
end. Tokenizing 4 MB takes seconds and close to a gigabyte, and parsing it a quarter of that, although
the canvas keeps at most `max_length` tokens around the cursor. No token is longer than the tokenizer's
longest (`longest_token`: 81 characters for the bundled model's), so text more than `char_budget` =
`max_length` x that many characters from the cursor never reaches a canvas, and `cut_around` drops it
first.

The cut is exact for the canvas: the window planner (`infill.canvas`) crops whole lines and snaps its top
to a line whose number is a multiple of `START_GRID` counted from the start of the text it is given, so
the cut falls on such a line too, and the planner picks the same lines of the cut text, token for token.
What sees less is what reads the text beyond the window: the parse that plans the completion and checks
the result reads only the kept lines (a string opened before the cut is not seen as one).

The engine server's endpoints (`remote.server.bounds`) and next edits (`infill.next_edit.crop`) cut
with it.
"""

from __future__ import annotations

import functools
from typing import Any

from infill.canvas import START_GRID
from infill.leads import vocab_texts


@functools.lru_cache(maxsize=4)
def longest_token(tokenizer: Any) -> int:
    """Characters of the tokenizer's longest token (special tokens included, as text may spell them)."""
    texts = vocab_texts(tokenizer)
    special = [tokenizer.decode([i]) for i in getattr(tokenizer, "all_special_ids", []) or []]
    return max(1, max(map(len, texts)), max(map(len, special), default=0))


def char_budget(engine: Any) -> int:
    """Characters around the cursor beyond which no text can be part of the model's context."""
    return int(engine.max_length) * longest_token(engine.tokenizer)


def cut_around(text: str, start: int, end: int, budget: int) -> tuple[int, str]:
    """(offset, kept): the part of `text` that a window of at most `budget` characters on either side of
    [start, end) can reach, from a line start on the `START_GRID` (`offset` is where it starts in `text`)
    to a line end. Where the nearest line break is itself out of reach, the cut falls inside the line."""
    low, high = start - budget, end + budget
    if low <= 0 and high >= len(text):
        return 0, text
    first = 0 if low <= 0 else _first_line_start(text, low, start)
    stop = len(text) if high >= len(text) else _line_end_after(text, high, budget)
    return first, text[first:stop]


def cut_prompt(prefix: str, suffix: str, budget: int) -> tuple[str, int]:
    """(text, cursor): `cut_around` of `prefix + suffix` at the cursor between them, without first
    copying the two whole."""
    before = cut_around(prefix, len(prefix), len(prefix), budget)[1]
    after = cut_around(suffix, 0, 0, budget)[1]
    return before + after, len(before)


def _first_line_start(text: str, low: int, start: int) -> int:
    """The last line start on the grid at or before the first line start at or after `low` (not further
    back than one more `start - low` characters), or `low` itself when no line starts in [low, start]."""
    found = text.find("\n", low - 1, start)
    if found < 0:
        return low
    first = found + 1
    floor = max(0, 2 * low - start)
    for _ in range(text.count("\n", 0, first) % START_GRID):
        previous = text.rfind("\n", floor, first - 1)
        if previous < 0 and floor > 0:
            return found + 1  # the grid line is out of reach: keep the nearer line start
        first = previous + 1
    return first


def _line_end_after(text: str, high: int, budget: int) -> int:
    """The end (after its break) of the line holding offset `high - 1`, or `high` when that line runs on
    for more than another `budget` characters."""
    found = text.find("\n", high - 1, high + budget)
    return high if found < 0 else found + 1
