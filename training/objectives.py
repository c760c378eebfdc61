"""What a training window teaches: the objective mix (`--mix`), one objective per window.

- `single`: one-line gaps (a line, the rest of a line, a one-line statement or a few tokens of it);
- `multi`: 2-10 lines at statement and block boundaries whose right answer differs from the lines around
  them (training.block_gaps);
- `header`: a window under the repository header the product builds (training.headers), its gaps chosen
  where the header names what the middle needs;
- `end`: single and multi-line gaps whose mask blocks reach the end of the middle, so that the masks learn
  where end-of-text goes (the span's length) as well as the committed rows do;
- `next_edit`: a region masked as infill.next_edit.candidates masks it, under the edit history header
  infill.next_edit.header writes, cut from consecutive releases of corpus packages
  (training.next_edit_examples).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from training.block_gaps import choose_blocks
from training.gaps import Corpus, Gap, Window, choose_window, right_length, sample_gaps
from training.headers import Headers, header_names, uses_header
from training.next_edit_examples import EditExample, edit_window
from training.packed import Rows, build_rows

OBJECTIVES = ("single", "multi", "header", "end", "next_edit")
DEFAULT_MIX = "single=0.25,multi=0.3,header=0.2,end=0.15,next_edit=0.1"


def parse_shares(text: str, flag: str, names: tuple[str, ...] | None = None) -> dict[str, float]:
    """`name=share,...` -> shares summing to 1 (names from `names` when given; a share of 0 leaves one out)."""
    shares: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if names is not None and name not in names:
            raise SystemExit(f"{flag} {text!r}: unknown name {name!r} (known: {', '.join(names)})")
        try:
            shares[name] = float(value)
        except ValueError:
            raise SystemExit(f"{flag} {text!r}: share of {name!r} is not a number") from None
    total = sum(shares.values())
    if total <= 0 or any(v < 0 for v in shares.values()):
        raise SystemExit(f"{flag} {text!r}: shares must be >= 0 and not all 0")
    return {k: v / total for k, v in shares.items() if v > 0}


def parse_mix(text: str) -> dict[str, float]:
    return parse_shares(text, "--mix", OBJECTIVES)


@dataclass(frozen=True)
class Shape:
    window: int = 512
    points: int = 6
    mask_blocks: int = 2
    block_masks: int = 7


@dataclass
class Example:
    kind: str
    ids: np.ndarray  # end-of-text, the header (if any), the file window
    gaps: list[Gap]
    rows: Rows
    header: int = 0  # header tokens after the leading end-of-text


class Sampler:
    """Draws examples of each objective from one corpus split (and its next-edit examples)."""

    def __init__(self, corpus: Corpus, special: Any, shape: Shape, headers: Headers | None = None,
                 edits: list[EditExample] | None = None) -> None:
        self.corpus = corpus
        self.special = special
        self.shape = shape
        self.headers = headers
        self.edits = edits or []

    def draw(self, rng: random.Random, mix: dict[str, float]) -> Example | None:
        kind = rng.choices(list(mix), list(mix.values()))[0]
        return self.example(kind, rng)

    def example(self, kind: str, rng: random.Random) -> Example | None:
        if kind == "next_edit":
            if not self.edits:
                return None
            ids, gaps, header = edit_window(rng.choice(self.edits), self.corpus.tokenizer, self.special.eos,
                                            self.shape.window, rng)
            return self._rows(kind, ids, gaps, header, rng) if gaps else None
        window = choose_window(self.corpus, rng, self.shape.window)
        tf = self.corpus.file(window.file)
        ids = np.concatenate([[self.special.eos], tf.ids[window.start : window.start + window.length]])
        if kind == "header":
            return self._header_example(window, ids, rng)
        gaps = self._gaps(kind, window, rng)
        if kind == "end":
            gaps = [dataclasses.replace(g, at_end=True) for g in gaps]
        return self._rows(kind, ids, gaps, 0, rng) if gaps else None

    def _gaps(self, kind: str, window: Window, rng: random.Random) -> list[Gap]:
        points = self.shape.points
        if kind == "single" or (kind == "end" and rng.random() < 0.5):
            return sample_gaps(self.corpus, window, rng, points, max_lines=1)
        blocks = self._blocks(window, rng, points)
        return blocks or sample_gaps(self.corpus, window, rng, points // 2)

    def _blocks(self, window: Window, rng: random.Random, count: int) -> list[Gap]:
        tf = self.corpus.file(window.file)
        lo, hi = window.start + 7, window.start + window.length
        gaps = []
        for a, b in choose_blocks(tf, self.corpus.languages[window.file], lo, hi, rng, count):
            right = tf.ids[b : b + right_length(rng)]
            gaps.append(Gap(a - window.start + 1, b - window.start + 1, right, "block"))
        return gaps

    def _header_example(self, window: Window, ids: np.ndarray, rng: random.Random) -> Example | None:
        if self.headers is None:
            return None
        tf = self.corpus.file(window.file)
        cursor = window.start + int(window.length * rng.uniform(0.3, 0.9))
        offset = int(tf.offsets[min(cursor, len(tf.offsets) - 1)])
        header = self.headers.header(window.file, offset, rng)
        if not header:
            return None
        candidates = (sample_gaps(self.corpus, window, rng, self.shape.points, max_lines=1)
                      + self._blocks(window, rng, self.shape.points))
        text = self.corpus.texts[window.file]
        start = int(tf.offsets[window.start])

        def helped(gap: Gap) -> bool:
            a, b = window.start + gap.a - 1, window.start + gap.b - 1
            end = int(tf.offsets[b]) if b < len(tf.offsets) else len(text)
            return uses_header(text[int(tf.offsets[a]) : end], header_names(header, text[start : int(tf.offsets[a])]))

        helpful = [helped(g) for g in candidates]
        chosen = [g for g, h in zip(candidates, helpful) if h]
        others = [g for g, h in zip(candidates, helpful) if not h]
        chosen += rng.sample(others, min(len(others), max(0, self.shape.points - len(chosen))))
        if not chosen:
            return None
        header_ids = np.asarray(self.corpus.tokenizer.encode(header, add_special_tokens=False), dtype=ids.dtype)
        h = len(header_ids)
        ids = np.concatenate([ids[:1], header_ids, ids[1:]])
        gaps = [dataclasses.replace(g, a=g.a + h, b=g.b + h) for g in chosen]
        return self._rows("header", ids, gaps, h, rng)

    def _rows(self, kind: str, ids: np.ndarray, gaps: list[Gap], header: int, rng: random.Random) -> Example:
        s = self.shape
        rows = build_rows(ids, gaps, self.special.mask, self.special.eos, s.mask_blocks, s.block_masks, rng)
        return Example(kind, ids, gaps, rows, header)


def without_header(example: Example) -> Example:
    """The same gaps and rows without the header (for the held-out measure of what the header buys)."""
    h = example.header
    ids = np.concatenate([example.ids[:1], example.ids[1 + h :]])
    gaps = [dataclasses.replace(g, a=g.a - h, b=g.b - h) for g in example.gaps]
    rows = dataclasses.replace(example.rows, positions=[p - h for p in example.rows.positions])
    return Example(example.kind, ids, gaps, rows, 0)

