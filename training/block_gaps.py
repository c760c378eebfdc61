"""Multi-line gaps at statement and block boundaries, in every language with a grammar.

A gap is a run of consecutive statements of one body (the language's `containers`: a module, a block, a
class body), 2 to MAX_LINES whole lines, cut as infill cuts a block completion: the middle starts at the
line break before its first line and the right context at the line break after its last. It is kept only
when its right answer differs from the lines around it: the shipped adapter copied lines from the text
after the gap where the base, reading no suffix, wrote the right ones (8 % multi-line pass@1 against the
base's 13 %), so a gap whose lines the right context (or the lines just above it) already holds teaches
the wrong habit.
"""

from __future__ import annotations

import bisect
import random
import re
from collections.abc import Iterator

import numpy as np

from infill.languages import LanguageSpec, get_language
from infill.positions import LineIndex
from training.gaps import MAX_MIDDLE, TokFile

MIN_LINES, MAX_LINES = 2, 10
AROUND = 10  # lines either side compared with the middle's
MIN_CHARS = 8  # a line shorter than this (a brace, `else:`) says nothing about copying
IMPORTS = re.compile(r"\s*(import|from|#include|using|package|use|require)\b")


def statement_runs(text: str, spec: LanguageSpec) -> list[tuple[int, int]]:
    """(first, last) 0-based lines of every run of consecutive statements of one body that starts and ends
    its lines and spans MIN_LINES..MAX_LINES lines."""
    if not spec.has_grammar or not spec.containers:
        return []
    lines = text.split("\n")
    runs: set[tuple[int, int]] = set()
    for node in _walk(spec.parse(text).root_node):
        if node.type not in spec.containers:
            continue
        kids = [k for k in node.named_children if k.type not in spec.comments]
        for i, first in enumerate(kids):
            row = first.start_point[0]
            if lines[row][: first.start_point[1]].strip() or (i and kids[i - 1].end_point[0] >= row):
                continue
            for j in range(i, len(kids)):
                last = kids[j].end_point[0]
                if last - row + 1 > MAX_LINES:
                    break
                if (lines[last][kids[j].end_point[1]:].strip() or
                        (j + 1 < len(kids) and kids[j + 1].start_point[0] <= last)):
                    continue
                if last - row + 1 >= MIN_LINES:
                    runs.add((row, last))
    return sorted(runs)


def _walk(node):  # type: ignore[no-untyped-def]
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def _normal(line: str) -> str:
    return " ".join(line.split())


def differs(lines: list[str], first: int, last: int) -> bool:
    """The run's lines are not what the lines around it already say: its first line is not the line after
    it, and at most a third of its substantial lines appear within AROUND lines either side."""
    middle = [_normal(x) for x in lines[first : last + 1] if len(x.strip()) >= MIN_CHARS]
    if not middle or all(IMPORTS.match(x) for x in middle):
        return False
    after = [_normal(x) for x in lines[last + 1 : last + 1 + AROUND]]
    before = [_normal(x) for x in lines[max(0, first - AROUND) : first]]
    following = next((x for x in after if x), "")
    if following and following == _normal(lines[first]):
        return False
    around = set(after) | set(before)
    return sum(x in around for x in middle) * 3 <= len(middle)


def block_cuts(tf: TokFile, language: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """Token ranges [a, b) of the file's statement runs that differ from their surroundings, with
    lo <= a < b <= hi and at most MAX_MIDDLE tokens: a is the line-break token before the run's first line,
    b the one after its last."""
    try:
        spec = get_language(language)
    except ValueError:
        return
    index = LineIndex(tf.text)
    lines = tf.text.split("\n")
    for first, last in statement_runs(tf.text, spec):
        if first == 0 or last + 1 >= len(lines) or not differs(lines, first, last):
            continue
        a = _break_token(tf, index.line_start(first) - 1)
        b = _break_token(tf, index.line_start(last + 1) - 1)
        if a is not None and b is not None and lo <= a < b <= hi and b - a <= MAX_MIDDLE:
            yield a, b


def _break_token(tf: TokFile, offset: int) -> int | None:
    """The token that starts with the line break at `offset`, when one does (else the break is inside a
    token and no canvas cuts there)."""
    i = bisect.bisect_left(tf.breaks.tolist(), int(np.searchsorted(tf.offsets, offset, side="left")))
    if i < len(tf.breaks) and tf.offsets[tf.breaks[i]] == offset:
        return int(tf.breaks[i])
    return None


def choose_blocks(tf: TokFile, language: str, lo: int, hi: int, rng: random.Random, count: int) -> list[tuple[int, int]]:
    cuts = list(block_cuts(tf, language, lo, hi))
    rng.shuffle(cuts)
    return cuts[:count]
