"""What the line at the cursor must look like for the file to parse, and a lead that holds a span to it.

`repair.baseline` decides whether a file parsed before a fill by putting stand-in lines where the cursor's
blank line is: the language's empty statement first, then lines that open, continue or close a block
(`LanguageSpec.stand_in_lines`). When only an opener makes the file parse (a body follows whose header is
missing) or only a closer does (a block is never closed), the missing line has that shape whatever its
text: it ends with `{` (`:` in Python, an open bracket) or starts with `}`. A left-to-right model at such a
spot often writes a plain statement instead, and banning its first token rarely finds the opener (on
SantaCoder's JavaScript, 25 of 36 unparsing fills were dropped that way after two retries, and 10 more came
back empty). `ShapeLead` re-decodes the line with the shape as a constraint: it may start only towards the
closer and may not end (no line break, no end of text) before it ends with the opener. Where the file
parses with the line at one indentation only (Python), the code starts there, and a Python line that opens
a block starts with a compound-statement keyword (`LanguageSpec.header_keywords`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infill.bans import BanPlan, lead_token_count
from infill.canvas import Slot
from infill.languages import LanguageSpec
from infill.leads import TextLead, vocab_texts
from infill.spots import Edit, Spot

_OPEN_BRACKETS = frozenset("([{")
_CLOSE_BRACKETS = frozenset(")]}")


INDENTS = ("next", "above", "deeper")
"""Where a stand-in line takes its indentation from (`indent_for`)."""
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class LineShape:
    """`starts`: what the line's code may begin with (after its indentation; any one of them, anything when
    empty); `ends`: text it must end with; `indent`: where its indentation comes from (`INDENTS`), when the
    file parses at that one only (Python)."""

    starts: tuple[str, ...] = ()
    ends: str = ""
    indent: str | None = None

    @staticmethod
    def of(stand_in: str, spec: LanguageSpec, failed: Sequence[str] = (), indent: str | None = None) -> LineShape | None:
        """The shape a stand-in line stands for, given the stand-ins that `failed` before it; None for a line
        without one (the empty statement). It starts with its closer (`} else {`); with its keyword when an
        earlier stand-in that ends the same way failed (`try:` where `if True:` did not parse: an `except`
        follows the body); else, opening a block, with one of the row's `header_keywords` (Python's
        compound statements), where it has them."""
        code = stand_in.strip()
        if not code:
            return None
        last = code[-1]
        ends = last if last in _OPEN_BRACKETS or last in spec.block_header_end else ""
        keyword = _WORD.match(code)
        starts: tuple[str, ...] = ()
        if code[0] in _CLOSE_BRACKETS:
            starts = (code[0],)
        elif keyword and ends and any(f.strip().endswith(ends) and f.strip() != code for f in failed):
            starts = (keyword.group(0),)
        elif ends in spec.block_header_end:
            starts = tuple(sorted(spec.header_keywords))
        return LineShape(starts, ends, indent) if starts or ends else None

    def holds(self, line: str, indent: str | None = None) -> bool:
        """Whether `line` has the shape (at indentation `indent`, when given)."""
        code = line.strip()
        placed = indent is None or line[: len(line) - len(line.lstrip())] == indent
        return placed and self.opening(code) is not None and code.endswith(self.ends)

    @property
    def closes(self) -> bool:
        """Whether the line must start by closing a block."""
        return any(s[:1] in _CLOSE_BRACKETS for s in self.starts)

    def opening(self, code: str) -> str | None:
        """Which of `starts` the code begins with, as a whole word ("" when any will do), or None."""
        if not self.starts:
            return ""
        return next((s for s in self.starts if _begins(code, s)), None)

    def towards(self, code: str) -> tuple[str, ...]:
        """What `code`, shorter than one of `starts` and its beginning, has still to write of them."""
        return tuple(s[len(code) :] for s in self.starts if len(code) < len(s) and s.startswith(code))


def _depth(code: str, start: int = 0) -> int | None:
    """Bracket depth after `code` from `start`; None where it ends a statement (`;`) or closes a bracket
    it did not open, outside every bracket (string literals are not told apart: rare in a header)."""
    depth = start
    for char in code:
        if char in _OPEN_BRACKETS:
            depth += 1
        elif char in _CLOSE_BRACKETS or char == ";":
            if depth == 0:
                return None
            depth -= char != ";"
    return depth


@functools.lru_cache(maxsize=32)
def _code_ids(vocab: tuple[str, ...], comment_prefix: str, spaces: bool, depth: int) -> frozenset[int]:
    """Ids that go on writing a header at bracket `depth`: one line (no line break), no comment (a line
    that must end by opening a block cannot end inside one), no `;` or closer outside the brackets (the
    model ended its statement and was kept writing), not only spaces unless `spaces` (indentation; kept
    from ending its line, the model went on writing spaces), not a special token (text "": they end a
    span)."""
    return frozenset(i for i, s in enumerate(vocab) if s and (spaces or s.strip()) and "\n" not in s
                     and not (comment_prefix and comment_prefix in s) and _depth(s, depth) is not None)


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _begins(code: str, start: str) -> bool:
    """Whether `code` begins with `start`, a whole word when it ends with a letter (`if`, not `ifrom`)."""
    return code.startswith(start) and not (start[-1:].isalpha() and _word_char(code[len(start) : len(start) + 1]))


def _heads_to(code: str, rests: tuple[str, ...]) -> bool:
    return any(_begins(code, r) or r.startswith(code) for r in rests)


@functools.lru_cache(maxsize=4)
def _word_end_ids(vocab: tuple[str, ...]) -> frozenset[int]:
    """Ids that may follow a keyword: their text does not go on with its word."""
    return frozenset(i for i, s in enumerate(vocab) if s and not _word_char(s[0]))


@functools.lru_cache(maxsize=64)
def _towards(vocab: tuple[str, ...], rests: tuple[str, ...], first: bool, spaces: bool) -> frozenset[int]:
    """Ids of one-line text that continues a line towards one of `rests` (a prefix of it, or past it):
    with leading spaces when the line has no code yet (`first`), and spaces alone when `spaces`."""
    out = []
    for i, s in enumerate(vocab):
        if not s or "\n" in s:
            continue
        t = s.lstrip() if first else s
        if (spaces and not t) or (t and _heads_to(t, rests)):
            out.append(i)
    return frozenset(out)


@functools.lru_cache(maxsize=16)
def _one_break(vocab: tuple[str, ...], rest: str) -> frozenset[int]:
    """Ids with no line break past the `rest` of a lead."""
    return frozenset(i for i, s in enumerate(vocab) if "\n" not in (s[len(rest) :] if s.startswith(rest) else s))


@functools.lru_cache(maxsize=64)
def _placed(vocab: tuple[str, ...], rest: str, starts: tuple[str, ...], comment_prefix: str) -> frozenset[int]:
    """Ids that go on writing a line's indentation, `rest` of it still to come: spaces that are a prefix
    of it, or exactly it and then code that heads towards one of `starts` (or, without, ends no statement)."""
    out = []
    for i, s in enumerate(vocab):
        if not s or "\n" in s or (comment_prefix and comment_prefix in s):
            continue
        code = s.lstrip(" \t")
        spaces = s[: len(s) - len(code)]
        if not code:
            if rest.startswith(spaces):
                out.append(i)
        elif spaces == rest and (_heads_to(code, starts) if starts else _depth(code) is not None):
            out.append(i)
    return frozenset(out)


def indent_limit(text: str, offset: int) -> int:
    """The columns of indentation a line at `offset` may have: the deeper of the nearest non-blank lines
    above and below (an opener or closer sits no deeper than the code around it)."""
    lines, index = text.split("\n"), text.count("\n", 0, offset)
    return max(len(indent_for(lines, index, where)) for where in ("above", "next"))


class ShapeLead:
    """`engine.types.Lead` of a span whose line must have `shape`: first the span's own lead (`base`, the
    healed boundary), then tokens towards `shape.starts`, then anything on the same line until the line
    ends with `shape.ends`; finished (None) once the line has its shape, so the line break after it ends
    the span as a stop token does. The code starts at indentation `exact` where that is given (the file
    parses with the line there only), else spaces alone may come only before the code, up to `limit`
    columns (kept from ending its line, the model went on writing spaces and tabs). While unfinished the
    engine writes one verified token a step."""

    def __init__(self, base: TextLead | None, shape: LineShape, comment_prefix: str, exact: str | None,
                 limit: int, tokenizer: Any) -> None:
        self.base, self.shape, self.comment_prefix = base, shape, comment_prefix
        self.exact, self.limit = exact, limit
        self.vocab = vocab_texts(tokenizer)
        self.text = (base.text if base is not None else "") + (shape.starts[0] if len(shape.starts) == 1 else "")

    @staticmethod
    def at(base: TextLead | None, shape: LineShape, spec: LanguageSpec, text: str, offset: int,
           tokenizer: Any) -> ShapeLead:
        """The lead of the line at `offset` of `text`."""
        lines = text.split("\n")
        exact = None if shape.indent is None else indent_for(lines, text.count("\n", 0, offset), shape.indent)
        return ShapeLead(base, shape, spec.comment_prefix, exact, indent_limit(text, offset), tokenizer)

    def allowed(self, written: Sequence[int]) -> frozenset[int] | None:
        text = "".join(self.vocab[t] if t < len(self.vocab) else "" for t in written)
        if self.base is not None:
            required = self.base.allowed(written)
            if required is not None:  # the lead, and no blank line after it (`\n    \n   ` is one token)
                return required & _one_break(self.vocab, self.base.text[len(text) :])
        line = text[text.rfind("\n") + 1 :]
        if self.shape.holds(line, self.exact):
            return None
        code = line.lstrip()
        if not code and self.exact is not None and self.exact.startswith(line):
            return _placed(self.vocab, self.exact[len(line) :], self.shape.starts, self.comment_prefix)
        indenting = not code and len(line) < self.limit
        if rests := self.shape.towards(code):
            return _towards(self.vocab, rests, not code, indenting)
        opening = self.shape.opening(code) or ""
        ids = _code_ids(self.vocab, self.comment_prefix, indenting, _depth(code[len(opening) :]) or 0)
        return ids & _word_end_ids(self.vocab) if opening and code == opening and opening[-1].isalpha() else ids

    def __repr__(self) -> str:
        return f"ShapeLead({self.shape})"


def unshaped_slots(text: str, spots: Sequence[Spot], edits: Sequence[Edit | None],
                   wheres: Sequence[int | None]) -> list[int]:
    """The spots on a blank line (where the baseline's shape applies) whose last result was dropped, empty,
    or broke the parse (`wheres[i]` set)."""
    return [i for i, (spot, edit, where) in enumerate(zip(spots, edits, wheres))
            if (edit is None or where is not None) and on_blank_line(text, spot)]


def shape_plans(tokenizer: Any, slots: Sequence[Slot], kept: Sequence[list[int]], retried: Sequence[int],
                earlier: Sequence[dict[tuple[int, ...], frozenset[int]]]) -> list[BanPlan | None]:
    """The retries of the `retried` slots' lines, held to their shape: each restarts at the first token of
    code its last attempt wrote after its lead and indentation, which it may not write again (greedy
    decoding would start the same statement), nor what earlier retries banned there (`earlier[i]`, by the
    tokens kept before), or where the attempt ended when it wrote none."""
    vocab = vocab_texts(tokenizer)
    plans: list[BanPlan | None] = []
    for i, (slot, ids) in enumerate(zip(slots, kept)):
        lead = lead_token_count(tokenizer, ids, slot.lead)
        index = next((j for j in range(lead, len(ids)) if vocab[ids[j]].strip()), len(ids))
        if "\n" in "".join(vocab[t] for t in ids[:index])[len(slot.lead) :]:
            index = 0  # a blank line came with the lead: write the line again from its start
        banned = frozenset(ids[index : index + 1]) | earlier[i].get(tuple(ids[:index]), frozenset())
        plans.append(BanPlan(index, banned) if i in retried else None)
    return plans


def on_blank_line(text: str, spot: Spot) -> bool:
    """Whether `spot` is an insertion on a line with nothing but whitespace (where `statement_texts` puts
    its stand-ins)."""
    start = text.rfind("\n", 0, spot.start) + 1
    end = text.find("\n", spot.start)
    return spot.start == spot.end and not text[start : len(text) if end == -1 else end].strip()


def indent_for(lines: list[str], index: int, where: str) -> str:
    step = range(index + 1, len(lines)) if where == "next" else range(index - 1, -1, -1)
    near = next((lines[i] for i in step if lines[i].strip()), "")
    indent = near[: len(near) - len(near.lstrip(" \t"))]
    return indent + ("\t" if indent.startswith("\t") else "    ") if where == "deeper" else indent
