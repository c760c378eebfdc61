"""Where the user's next edit may be: candidate regions, ranked from their last edit.

Three kinds, cheapest (most likely) first, at most `MOST` per request:
- `echo`: a place that still holds what the edit replaced (an old name, attribute, literal: a replaced run
  of tokens that holds a word, or the whole text the rename rule would replace, `KeyError` when the edit
  wrote `KeyError(key)`); the same document first (the nearest below the edit, then above), then
  other open documents. What is masked there is that text alone, so the model rewrites it with the rest of
  the line, and the lines around, on both sides of it;
- `shape`: a line near the edit shaped like the edited line was (the same token kinds in the same order:
  a column of similar assignments or calls), masked whole;
- `window`: the line right below the edit, masked whole (what the autoregressive anchors rewrite).
A region's `first`..`last` lines are what an editor shows it on; `start`..`end` is the text masked. Regions
never touch the edit's own lines (the text being typed); masked texts never overlap, and never meet with
only blank lines between them (their masks would run into one gap).
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from infill.languages import LanguageSpec
from infill.next_edit.edits import DocEdit, code_tokens
from infill.next_edit.rule import pattern, replacement
from infill.positions import LineIndex

MOST = 8
MAX_LINES = 4
WINDOW = 2  # lines below the edit in the `window` region
NEAR = 12  # lines either side of the edit searched for `shape` lines
SHAPE_RATIO = 0.75
HITS = 4  # echo places made into regions per region asked for, the nearest first
_WORD = re.compile(r"[A-Za-z_0-9\"']")


@dataclass(frozen=True)
class Region:
    """0-based lines `first`..`last` (inclusive) of document `uri`, masked from offset `start` to `end`;
    `kind`: why it is a candidate."""

    uri: str
    first: int
    last: int
    kind: str
    start: int = 0
    end: int = 0

    def overlaps(self, other: Region) -> bool:
        return self.uri == other.uri and self.first <= other.last and other.first <= self.last

    def touches(self, other: Region, text: str) -> bool:
        """Masked texts that overlap, or have only whitespace between them: their masks would run into one
        gap (a gap that starts a line takes the blank lines above it as its lead, `infill.leads`)."""
        if self.uri != other.uri:
            return False
        low, high = (self, other) if self.start <= other.start else (other, self)
        return high.start <= low.end or not text[low.end : high.start].strip()


def anchors(edit: DocEdit) -> list[tuple[tuple[str, ...], bool]]:
    """Token runs whose other occurrences are places the edit may apply again, each with whether the run
    itself is what changes there: a replaced run's old tokens when they hold a word (masked alone), else,
    for a pure insertion or a change of punctuation, the word just before it in the old lines, such as a
    call's name whose arguments changed (its whole line is masked)."""
    old = code_tokens(edit.old_lines)
    found: list[tuple[tuple[str, ...], bool]] = []
    cursor = 0
    for change in edit.changes:
        if change.old and any(_WORD.match(t) for t in change.old):
            found.append((change.old, True))
            continue
        at = _find(old, change.old, cursor) if change.old else cursor
        before = [t for t in old[:at] if _WORD.match(t)]
        if before:
            found.append(((before[-1],), False))
    return list(dict.fromkeys(found))


def _find(tokens: list[str], run: Sequence[str], start: int) -> int:
    for i in range(start, len(tokens) - len(run) + 1):
        if tuple(tokens[i : i + len(run)]) == tuple(run):
            return i
    return start


def _pattern(run: Sequence[str]) -> re.Pattern[str]:
    """A token run as text: the tokens in order, whitespace allowed between them, words whole."""
    parts = [re.escape(t) for t in run]
    body = r"\s*".join(parts)
    head = r"(?<![A-Za-z_0-9])" if _WORD.match(run[0]) else ""
    tail = r"(?![A-Za-z_0-9])" if _WORD.match(run[-1]) else ""
    return re.compile(head + body + tail)


def _hits(text: str, run: Sequence[str]) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _pattern(run).finditer(text)]


def _node_type(text: str, start: int, end: int, spec: LanguageSpec) -> str | None:
    """The type of the smallest named node of `text` covering [start, end), when it lies on one line."""
    if not spec.has_grammar or start >= end:
        return None
    data = text.encode("utf-8")
    lo, hi = len(text[:start].encode("utf-8")), len(text[:end].encode("utf-8"))
    node = spec.parser().parse(data).root_node.named_descendant_for_byte_range(lo, hi)
    return None if node is None or node.start_point[0] != node.end_point[0] else node.type


def _extent(text: str, start: int, end: int, spec: LanguageSpec, kind: str | None) -> tuple[int, int]:
    """[start, end) widened to the smallest enclosing node of type `kind` on the same line (the construct the
    edit changed, `Optional[str]` for a change to `str | None`), else as it is."""
    if kind is None or not spec.has_grammar:
        return start, end
    data = text.encode("utf-8")
    lo, hi = len(text[:start].encode("utf-8")), len(text[:end].encode("utf-8"))
    node = spec.parse(text).root_node.named_descendant_for_byte_range(lo, hi)
    while node is not None and node.type != kind:
        node = node.parent
    if node is None or node.start_point[0] != node.end_point[0] or node.start_byte > lo:
        return start, end
    return len(data[: node.start_byte].decode("utf-8", "replace")), len(data[: node.end_byte].decode("utf-8", "replace"))


def _kind(line: str) -> list[str]:
    """A line's shape: each token as 'w' (word), 'n' (number), 's' (string) or itself (punctuation)."""
    return ["n" if t[0].isdigit() else "s" if t[0] in "\"'" else "w" if _WORD.match(t) else t
            for t in code_tokens(line)]


def _lines_region(uri: str, index: LineIndex, first: int, last: int, kind: str) -> Region:
    return Region(uri, first, last, kind, index.line_start(first), index.line_end(last, with_break=True))


def regions(edit: DocEdit, text: str, spec: LanguageSpec, others: Iterable[tuple[str, str, LanguageSpec]] = (),
            most: int = MOST, window: tuple[int, int] | None = None) -> list[Region]:
    """Candidate regions for the next edit after `edit` (the newest edit, of document `edit.uri` whose text
    is now `text`), ranked; `others`: (uri, text, language) of the other open documents. `window`: only
    regions within these 0-based lines (inclusive) of `edit.uri` (a client's editable window)."""
    index = LineIndex(text)
    lines = text.split("\n")
    edited = Region(edit.uri, edit.line, max(edit.line, edit.end_line - 1), "edit", edit.start, edit.end)
    picked: list[Region] = []
    texts = {edit.uri: text}

    def add(region: Region) -> None:
        if (len(picked) < most and not (region.uri == edited.uri and edited.first <= region.last
                                         and region.first <= edited.last)
                and (window is None or region.uri == edit.uri and window[0] <= region.first and region.last <= window[1])
                and not any(region.touches(r, texts[region.uri]) for r in picked)):
            picked.append(region)

    runs = anchors(edit)
    span = edit.changed_old
    construct = None if span is None else _node_type(edit.old_lines, *span, spec)

    replaced = replacement(edit.old_lines, edit.new_lines)

    def echoes(uri: str, doc: str, doc_index: LineIndex, doc_spec: LanguageSpec,
               rank: Callable[[int, int], tuple[int, ...]]) -> list[Region]:
        """The echo regions of `doc`, made for the `HITS` x `most` places that `rank` (line, offset) puts
        first: a common word's every occurrence in a long file would cost a region, and a parse, each."""
        found: set[tuple[int, int, int, str]] = set()  # line, start, end, how it is masked
        if replaced is not None:  # the rename rule's own places: what it would rewrite, masked alone
            found.update((doc_index.line_of(m.start()), m.start(), m.end(), "rule")
                         for m in pattern(replaced[0]).finditer(doc))
        for run, alone in runs:
            found.update((doc_index.line_of(start), start, end, "alone" if alone else "line")
                         for start, end in _hits(doc, run))
        made: set[Region] = set()
        # the rule's places before the runs' at the same offset, longer before shorter: the order is total,
        # so the regions picked never depend on a set's iteration order (string hashing varies per process)
        for line, start, end, how in heapq.nsmallest(HITS * most, found,
                                                    key=lambda h: (*rank(h[0], h[1]), h[3] != "rule", -h[2], h[3])):
            if how == "line":
                made.add(_lines_region(uri, doc_index, line, line, "echo"))
                continue
            if how == "alone":
                start, end = _extent(doc, start, end, doc_spec, construct)
            made.add(Region(uri, line, line, "echo", start, end))
        return list(made)

    for region in sorted(echoes(edit.uri, text, index, spec,
                                lambda line, start: (line < edited.first, abs(line - edited.last), start)),
                         key=lambda r: (r.first < edited.first, abs(r.first - edited.last), r.start, -r.end)):
        add(region)
    shape = list(dict.fromkeys(tuple(_kind(line)) for line in edit.old_lines.split("\n") if line.strip()))
    if shape:
        near = [n for n in range(max(0, edited.first - NEAR), min(len(lines), edited.last + NEAR + 1))
                if not edited.first <= n <= edited.last]  # the edit's own lines are never a region
        for line in sorted(near, key=lambda n: (n < edited.first, abs(n - edited.last))):
            kinds = _kind(lines[line])
            if kinds and max(difflib.SequenceMatcher(a=s, b=kinds).ratio() for s in shape) >= SHAPE_RATIO:
                add(_lines_region(edit.uri, index, line, line, "shape"))
    below = edited.last + 1
    while below < len(lines) and not lines[below].strip():
        below += 1
    if below < len(lines) and lines[below].strip():
        add(_lines_region(edit.uri, index, below, below, "window"))
    for uri, other, other_spec in others:
        texts[uri] = other
        for region in sorted(echoes(uri, other, LineIndex(other), other_spec, lambda _, start: (start,)),
                             key=lambda r: (r.start, -r.end)):
            add(region)
    return picked
