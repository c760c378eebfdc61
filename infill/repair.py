"""Parse check of a filled document and the re-mask range for a result that breaks the syntax.

A diffusion model can revise: when the filled document has more ERROR/MISSING nodes than the
original, the tokens of the result's line that holds the first new error (plus a small margin) are
masked again and denoised with everything else fixed.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from infill.languages import LanguageSpec
from infill.positions import ByteMap
from infill.spots import Edit
from infill.syntax import error_nodes, error_points

REMASK_MARGIN = 2


@dataclass(frozen=True)
class Baseline:
    """The original document's errors: how many, and where (str offsets)."""

    count: int
    points: frozenset[int]


def baseline(text: str, spec: LanguageSpec) -> Baseline:
    if not spec.has_grammar:
        return Baseline(0, frozenset())
    tree = spec.parse(text)
    bytemap = ByteMap(text)
    return Baseline(len(error_nodes(tree)), frozenset(bytemap.to_offset(p) for p in error_points(tree)))


@dataclass(frozen=True)
class ParseCheck:
    """`added`: error nodes beyond the original's; `where[i]`: the offset inside edit i's new text of
    the first error that falls in (or right after) it, or None."""

    added: int
    where: tuple[int | None, ...]


def check_filled(text: str, edits: list[Edit | None], original: Baseline, spec: LanguageSpec) -> ParseCheck:
    """Parse `text` with `edits` applied and attribute each error to the result it follows (no errors
    for a language without a grammar: nothing was checked, which `fill` notes)."""
    if not spec.has_grammar:
        return ParseCheck(0, (None,) * len(edits))
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
    filled = "".join(pieces)
    tree = spec.parse(filled)
    added = len(error_nodes(tree)) - original.count
    where: list[int | None] = [None] * len(edits)
    if added <= 0:
        return ParseCheck(max(added, 0), tuple(where))
    bytemap = ByteMap(filled)
    known = {_shifted(point, edits) for point in original.points}
    for point in error_points(tree):
        offset = bytemap.to_offset(point)
        if offset in known:
            continue
        owner = None
        for index, start in enumerate(starts):
            if start != -1 and start <= offset:
                owner = index
        if owner is None or where[owner] is not None:
            continue
        new_text = edits[owner].new_text  # type: ignore[union-attr]
        where[owner] = min(offset - starts[owner], len(new_text))
    return ParseCheck(added, tuple(where))


def _shifted(offset: int, edits: list[Edit | None]) -> int:
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
