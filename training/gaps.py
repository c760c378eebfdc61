"""Infill-shaped training gaps for the anchored adapter, cut from tokenized corpus files.

A gap is a token range [a, b) of a file window (the middle) plus the right context that follows it.
Cuts mirror what the completion front end asks for, in the token boundaries the tokenizer produces
(three quarters end at a line break, a quarter at the end of a syntax node):
- `lines`: one to eight whole lines. The middle starts at a line-break token and ends before the next
  line-break token, so it is "\\n" + indentation + code and the right context starts with a line break:
  exactly the canvas infill builds for this family (the prefix backed off to before its last line break).
- `rest_of_line`: from a token inside a line to the end of that line (an inline completion).
- `node`: a Python statement or expression (ast), widened to whole tokens.
- `span`: a few tokens inside one line, the rest of the line being the right context.
Every gap's middle is followed by end-of-text as its last target: the model learns to end a span where the
right context takes over; no target lies past it, so padding never teaches it to leave a span empty.
"""

from __future__ import annotations

import ast
import bisect
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAX_MIDDLE = 96
MAX_RIGHT = 256
MAX_LINES = 8


@dataclass(frozen=True)
class TokFile:
    ids: np.ndarray  # int32 token ids
    offsets: np.ndarray  # int64 str offset where each token starts
    breaks: np.ndarray  # sorted indices of tokens whose text starts with a line break
    text: str


@dataclass(frozen=True)
class Gap:
    a: int  # middle = ids[a:b] of the window
    b: int
    right: np.ndarray  # the right context's token ids (end-of-text appended by the packer)
    kind: str
    at_end: bool = False  # its mask blocks reach the end of the middle (they predict end-of-text)


def tokenize(tokenizer: Any, text: str) -> TokFile:
    enc = tokenizer.backend_tokenizer.encode(text, add_special_tokens=False)  # transformers' or engine.loading.tokenizer's
    ids = np.asarray(enc.ids, dtype=np.int32)
    offsets = np.asarray([start for start, _ in enc.offsets], dtype=np.int64)
    breaks = np.asarray([i for i, o in enumerate(offsets) if o < len(text) and text[o] == "\n"], dtype=np.int64)
    return TokFile(ids, offsets, breaks, text)


class Corpus:
    """A split of the corpus (corpus_cache/corpus/<split>.jsonl), tokenized lazily, one file at a time.
    `languages` restricts it to files of those languages (None: all)."""

    def __init__(self, path: Path, tokenizer: Any, shares: dict[str, float] | None = None) -> None:
        self.tokenizer = tokenizer
        records = [json.loads(line) for line in path.open(encoding="utf-8")]
        self.texts = [r["text"] for r in records]
        self.packages = [r.get("package", "") for r in records]
        self.paths = [r.get("path", "") for r in records]
        self.languages = [r.get("language", "python") for r in records]
        sizes = np.asarray([len(t) for t in self.texts], dtype=np.float64)
        if shares:  # each language its share, files within it by size; languages not named are left out
            totals: dict[str, float] = {}
            for size, language in zip(sizes, self.languages):
                totals[language] = totals.get(language, 0.0) + size
            present = {k: v for k, v in shares.items() if totals.get(k)}
            sizes = np.asarray([size / totals[lang] * present[lang] if lang in present else 0.0
                                for size, lang in zip(sizes, self.languages)])
        self.cumulative = np.cumsum(sizes / max(sizes.sum(), 1e-12))
        self._files: dict[int, TokFile] = {}
        self._nodes: dict[int, list[tuple[int, int]]] = {}

    def file(self, index: int) -> TokFile:
        if index not in self._files:
            self._files[index] = tokenize(self.tokenizer, self.texts[index])
        return self._files[index]

    def nodes(self, index: int) -> list[tuple[int, int]]:
        if index not in self._nodes:
            self._nodes[index] = node_spans(self.texts[index]) if self.languages[index] == "python" else []
        return self._nodes[index]

    def pick(self, rng: random.Random) -> int:
        """A file, by its share of the corpus's characters."""
        return min(int(np.searchsorted(self.cumulative, rng.random() * self.cumulative[-1], side="right")),
                   len(self.texts) - 1)


def node_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) str offsets of the statements and expressions of a parseable file; [] otherwise."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:
        if lineno - 1 >= len(lines):
            return len(text)
        return starts[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    spans = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.stmt, ast.expr)) and getattr(node, "end_lineno", None) is not None:
            start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
            if end > start:
                spans.add((start, end))
    return sorted(spans)


@dataclass(frozen=True)
class Window:
    """Tokens file.ids[start : start + length] of one file; window index i is file index start + i - 1,
    window index 0 being the end-of-text the canvas starts with."""

    file: int
    start: int
    length: int


def choose_window(corpus: Corpus, rng: random.Random, width: int) -> Window:
    index = corpus.pick(rng)
    tf = corpus.file(index)
    starts = [0] + [int(i) for i in tf.breaks + 1 if i + 1 < len(tf.ids)]
    start = 0 if rng.random() < 0.25 or len(tf.ids) <= width else rng.choice(starts[: max(1, bisect.bisect_left(starts, len(tf.ids) - width // 2))])
    return Window(index, start, min(width - 1, len(tf.ids) - start))


def sample_gaps(corpus: Corpus, window: Window, rng: random.Random, points: int, min_prefix: int = 8,
                max_lines: int = MAX_LINES) -> list[Gap]:
    """Gaps whose middles lie in the window (window indices >= min_prefix), in groups that end at the same
    token and so share their right context: `points` such ends, two or three gaps each, of at most
    `max_lines` lines."""
    tf = corpus.file(window.file)
    lo, hi = window.start + min_prefix - 1, window.start + window.length  # file index bounds for a, b
    gaps: list[Gap] = []
    for _ in range(points * 3):
        if len(gaps) >= 3 * points:
            break
        use_lines = rng.random() < 0.75 or not corpus.nodes(window.file)
        cuts = _line_cuts(tf, rng, lo, hi, max_lines) if use_lines else _node_cuts(corpus, window.file, tf, rng, lo, hi)
        cuts = [(a, b, kind) for a, b, kind in dict.fromkeys(cuts)
                for middle in [tf.text[tf.offsets[a] : _offset(tf, b)]]
                if 0 < b - a <= MAX_MIDDLE and middle.strip() and middle.count("\n") <= max_lines]
        if not cuts:
            continue
        b = cuts[0][1]
        right = tf.ids[b : b + right_length(rng)]
        gaps.extend(Gap(a - window.start + 1, b - window.start + 1, right, kind) for a, b, kind in cuts)
    return gaps


def right_length(rng: random.Random) -> int:
    """Log-uniform in [4, MAX_RIGHT] (median ~32), and none at all 8% of the time (a gap at the end of a file)."""
    return 0 if rng.random() < 0.08 else int(math.exp(rng.uniform(math.log(4), math.log(MAX_RIGHT))))


def _offset(tf: TokFile, index: int) -> int:
    return int(tf.offsets[index]) if index < len(tf.offsets) else len(tf.text)


def _line_cuts(tf: TokFile, rng: random.Random, lo: int, hi: int, max_lines: int) -> list[tuple[int, int, str]]:
    """Gaps ending at one line break: the line before it, a few lines before it (up to `max_lines`), the
    rest of that line."""
    breaks = tf.breaks
    first, last = bisect.bisect_left(breaks, lo), bisect.bisect_right(breaks, hi) - 1
    if last <= first:
        return []
    i = rng.randrange(first + 1, last + 1)
    b = int(breaks[i])
    n = min(2 + int(rng.expovariate(1 / 1.5)), max_lines, i - first)
    cuts = [(int(breaks[i - 1]), b, "lines"), (int(breaks[i - n]), b, "lines")]
    line_start = int(breaks[i - 1])
    if b - line_start >= 3:
        cuts.append((rng.randrange(line_start + 1, b), b, "rest_of_line"))
    return cuts


def _node_cuts(corpus: Corpus, file: int, tf: TokFile, rng: random.Random, lo: int, hi: int) -> list[tuple[int, int, str]]:
    """A statement or expression (ast) widened to whole tokens, and a tail of it."""
    spans = corpus.nodes(file)
    lo_char, hi_char = _offset(tf, lo), _offset(tf, hi)
    left, right = bisect.bisect_left(spans, (lo_char, lo_char)), bisect.bisect_right(spans, (hi_char, hi_char))
    candidates = [s for s in spans[left:right] if s[1] <= hi_char]
    if not candidates:
        return []
    start, end = rng.choice(candidates)
    a = int(np.searchsorted(tf.offsets, start, side="right")) - 1
    b = int(np.searchsorted(tf.offsets, end, side="left"))
    if not lo <= a < b <= hi:
        return []
    cuts = [(a, b, "node")]
    if b - a >= 3:
        cuts.append((rng.randrange(a + 1, b), b, "span"))
    return cuts
