"""Parse check of a filled document and the re-mask range for a result that breaks the syntax.

The check reasons about the file the user will have after accepting: a document that parsed (by the
language's real parser where there is one, `infill.parsing`), or would have but for the hole markers being
filled, must parse afterwards; one that did not parse must not get more tree-sitter errors. A diffusion
model can revise: the tokens of the result's line that holds the first new error (plus a small margin) are
masked again and denoised with everything else fixed (`remask_range`; the anchored family re-decodes from
the first offending token instead, `infill.bans`).
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from infill.languages import LanguageSpec
from infill.line_shape import INDENTS, LineShape, indent_for, on_blank_line
from infill.parsing import first_error
from infill.positions import ByteMap
from infill.postprocess import token_offsets
from infill.scope import Read, Unbound, scope_reads, unresolved
from infill.spots import Edit, Spot
from infill.stand_ins import neutral_text, parses_apart
from infill.syntax import error_nodes, error_points

REMASK_MARGIN = 2


@dataclass(frozen=True)
class Baseline:
    """The original document: `parses` when it parsed, or would have with its spots' own text left out (a
    hole marker where a statement must stand); then a fill must leave it parsing. Otherwise its tree-sitter
    errors (how many, and where: str offsets), which a fill must not add to."""

    parses: bool
    count: int = 0
    points: frozenset[int] = frozenset()
    shape: LineShape | None = None
    """What the cursor's blank line must look like: set when only a stand-in that opens or closes a block
    made the file parse (`statement_texts`)."""
    reads: tuple[Read, ...] = ()
    """The reads after each replaced range of a name bound inside it (`infill.scope`): a fill must leave
    every one of them resolving."""


def baseline(text: str, spec: LanguageSpec, spots: Sequence[Spot] = ()) -> Baseline:
    parsing = _parse_baseline(text, spec, spots)
    reads = scope_reads(text, spec, spots)
    return dataclasses.replace(parsing, reads=reads) if reads else parsing


def _parse_baseline(text: str, spec: LanguageSpec, spots: Sequence[Spot]) -> Baseline:
    if not spec.has_grammar:
        return Baseline(False)
    if first_error(text, spec) is None:
        return Baseline(True)
    for stand_in in (spec.empty_statement, *spec.stand_in_lines):
        neutral = neutral_text(text, spots, spec, stand_in)
        if neutral is not None and first_error(neutral, spec) is None:
            return Baseline(True)
    if parses_apart(text, spots, spec):
        return Baseline(True)
    tried: list[str] = []
    for stand_in, where, candidate in statement_texts(text, spots, spec):
        if first_error(candidate, spec) is None:
            # where the same line parses at one indentation and not another, the indentation is part of it
            exact = stand_in in tried or any(first_error(c, spec) is not None for s, w, c in
                                             statement_texts(text, spots, spec) if s == stand_in and w != where)
            return Baseline(True, shape=LineShape.of(stand_in, spec, tried, where if exact else None))
        tried.append(stand_in)
    tree = spec.parse(text)
    bytemap = ByteMap(text)
    return Baseline(False, len(error_nodes(tree)), frozenset(bytemap.to_offset(p) for p in error_points(tree)))


def statement_texts(text: str, spots: Sequence[Spot], spec: LanguageSpec) -> Iterator[tuple[str, str, str]]:
    """Each stand-in line and indentation (`where`), and `text` with it on every blank line an insertion
    spot stands on (`on_blank_line`): the row's `empty_statement` and each of its `stand_in_lines`, at the
    indentation of the next non-blank line, of the last non-blank line above, and one level deeper. A document that parses so lacks only a
    line where the cursor is (a body emptied down to the line the user is writing, a block whose opener or
    closer is the line being written), so a fill there must leave it parsing."""
    lines = text.split("\n")
    blank = sorted({text.count("\n", 0, s.start) for s in spots if on_blank_line(text, s)})
    stand_ins = [line for line in (spec.empty_statement, *spec.stand_in_lines) if line]
    for stand_in in stand_ins if blank else []:
        for where in INDENTS:
            filled = list(lines)
            for i in blank:
                filled[i] = indent_for(lines, i, where) + stand_in
            yield stand_in, where, "\n".join(filled)


@dataclass(frozen=True)
class ParseCheck:
    """`added`: errors beyond the original's (for a document that parsed: 1 when the filled one does not;
    for one that parses, the edits that unbind a name read after them); `where[i]`: the offset inside edit
    i's new text of the first error that falls in (or right after) it, or None; `unbound[i]` (empty when
    none): the name edit i no longer defines, where its `where` is the end of its text (`scope_check`)."""

    added: int
    where: tuple[int | None, ...]
    unbound: tuple[Unbound | None, ...] = ()


def filled_text(text: str, edits: Sequence[Edit | None]) -> tuple[str, list[int]]:
    """`text` with `edits` (in order, not overlapping) applied, and where each edit's new text starts in it
    (-1 for None)."""
    pieces = []
    starts: list[int] = []
    cursor = 0
    filled_length = 0
    for edit in edits:
        if edit is None:
            starts.append(-1)
            continue
        pieces.append(text[cursor : edit.start])
        filled_length += edit.start - cursor
        starts.append(filled_length)
        pieces.append(edit.new_text)
        filled_length += len(edit.new_text)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces), starts


def check_filled(text: str, edits: Sequence[Edit | None], original: Baseline, spec: LanguageSpec) -> ParseCheck:
    """Parse `text` with `edits` applied and attribute each new error to the result it follows (no errors
    for a language without a grammar: nothing was checked, which `fill` notes)."""
    where: list[int | None] = [None] * len(edits)
    if not spec.has_grammar or all(e is None for e in edits):
        return ParseCheck(0, tuple(where))
    filled, starts = filled_text(text, edits)
    error = first_error(filled, spec)
    if error is None:
        return scope_check(text, edits, original, spec, filled)
    if original.parses:
        owner = _owner(starts, error)
        if owner is None:  # reported above every result (rare): blame the first
            owner = next(i for i, s in enumerate(starts) if s != -1)
            error = starts[owner]
        where[owner] = min(error - starts[owner], len(edits[owner].new_text))  # type: ignore[union-attr]
        return ParseCheck(1, tuple(where))
    tree = spec.parse(filled)
    added = len(error_nodes(tree)) - original.count
    if added <= 0:
        return ParseCheck(0, tuple(where))
    bytemap = ByteMap(filled)
    known = {_shifted(point, edits) for point in original.points}
    for point in error_points(tree):
        offset = bytemap.to_offset(point)
        owner = None if offset in known else _owner(starts, offset)
        if owner is None or where[owner] is not None:
            continue
        where[owner] = min(offset - starts[owner], len(edits[owner].new_text))  # type: ignore[union-attr]
    return ParseCheck(added, tuple(where))


def scope_check(text: str, edits: Sequence[Edit | None], original: Baseline, spec: LanguageSpec, filled: str
                ) -> ParseCheck:
    """The check of a filled document that parses: each edit must leave every read after it (in text no
    edit replaced) of a name its range bound resolving (`Baseline.reads`, `infill.scope`). An edit that
    does not is blamed at the end of its text: nothing it wrote is wrong in itself, and the name may still
    be bound by what the model would write next, so a retry keeps the text and bans ending there."""
    where: list[int | None] = [None] * len(edits)
    owners = {(e.start, e.end): i for i, e in enumerate(edits) if e is not None}
    present = [e for e in edits if e is not None]
    pending = [(read, owners[read.start, read.end]) for read in original.reads if (read.start, read.end) in owners
               and not any(e.start <= read.offset < e.end for e in present)]
    lost = unresolved(filled, spec, [(read, _shifted(read.offset, edits)) for read, _ in pending])
    unbound: list[Unbound | None] = [None] * len(edits)
    for (read, owner), gone in zip(pending, lost):
        edit = edits[owner]
        if gone and unbound[owner] is None and edit is not None:
            unbound[owner] = Unbound(read.name, read.line)
            where[owner] = len(edit.new_text)
    added = sum(u is not None for u in unbound)
    return ParseCheck(added, tuple(where), tuple(unbound) if added else ())


def _owner(starts: list[int], offset: int) -> int | None:
    """The last edit whose new text starts at or before `offset` in the filled text."""
    owner = None
    for index, start in enumerate(starts):
        if start != -1 and start <= offset:
            owner = index
    return owner


def _shifted(offset: int, edits: Sequence[Edit | None]) -> int:
    """An original offset after `edits` (outside every edit's range)."""
    shift = sum(len(e.new_text) - (e.end - e.start) for e in edits if e is not None and e.end <= offset)
    return offset + shift


def remask_range(
    offsets: list[int], span_length: int, raw: str, error_at: int, margin: int = REMASK_MARGIN
) -> tuple[int, int]:
    """Token indices [lo, hi) of a span to mask again around `error_at` (a char offset into `raw`).

    `offsets[i]` is where token i of the kept (pre-EOS) ids starts in `raw`; `span_length` counts the
    span's tokens with its EOS tail, so an error at the very end of the result (a missing closer)
    re-masks the first EOS slots too and lets the model write more.
    """
    if not offsets:
        return 0, min(span_length, 1 + margin)
    line_start = raw.rfind("\n", 0, error_at) + 1 if error_at > 0 else 0
    line_end = raw.find("\n", error_at)
    line_end = len(raw) if line_end == -1 else line_end
    lo = max(bisect.bisect_right(offsets, line_start) - 1, 0)
    hi = bisect.bisect_left(offsets, line_end) if line_end < len(raw) else len(offsets) + 1
    lo = max(lo - margin, 0)
    hi = min(max(hi, lo + 1) + margin, span_length)
    return lo, hi


def remasked(current: Sequence[int], positions: Sequence[tuple[int, int]], raws: Sequence[tuple[list[int], Any]],
             wheres: Sequence[int | None], engine: Any) -> list[int]:
    """The canvas `current` with each span that broke the parse (`wheres[i]` set) masked again around its
    first error (`remask_range`); `raws[i]` is the span's kept ids and shaped result."""
    canvas = list(current)
    for (start, end), (kept, shaped), where in zip(positions, raws, wheres):
        if where is None:
            continue
        offsets = token_offsets(engine.tokenizer, kept)
        lo, hi = remask_range(offsets, end - start, shaped.raw, shaped.raw_offset(where))
        canvas[start + lo : start + hi] = [engine.special.mask_id] * (hi - lo)
    return canvas
