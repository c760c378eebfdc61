"""The last word on a fill's edits: the file the user gets after accepting them must parse (or, for a file
that did not parse before, have no more errors than it had), and still define the names its code reads.

An edit that breaks the parse is cut back to its longest run of whole first lines that keeps the file
parsing (a completion that stops after `if x:` or half-way through a block keeps its complete statements),
and dropped when no such run exists; each such decision becomes a note naming the line and the reason.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from infill.languages import LanguageSpec
from infill.positions import LineIndex
from infill.repair import Baseline, check_filled
from infill.scope import NOTE_START
from infill.spots import Edit
from infill.worth_showing import drop_reason

MAX_CUTS = 32
"""Cut points tried per edit, longest first (each costs one parse of the document)."""

DROPPED = "dropped, the result does not parse"
CUT_BACK = "cut back to its last complete statement (the rest did not parse)"
UNBOUND = f"{NOTE_START}a name the code after it reads"


def settle(text: str, edits: Sequence[Edit | None], original: Baseline, spec: LanguageSpec
           ) -> tuple[list[Edit | None], list[str]]:
    """`edits` (one per spot, None for none) with every edit that breaks the parse cut back or dropped, and
    every edit that unbinds a name the code after it reads dropped (`repair.scope_check`: cutting it back
    binds nothing more), with a note for each (`line N: ...`, N the 1-based line where the spot starts).
    The edits returned pass the check: each round cuts back or drops one edit, and past one round per edit
    the blamed edit is dropped outright, so the rounds end, at the latest with no edit left."""
    kept = list(edits)
    notes: list[str] = []
    lines = LineIndex(text)
    for round_ in itertools.count():
        check = check_filled(text, kept, original, spec)
        if check.added <= 0:
            return kept, notes
        present = [i for i, e in enumerate(kept) if e is not None]
        blamed = [i for i in present if check.where[i] is not None] or present
        index = blamed[0]
        edit = kept[index]
        assert edit is not None
        unbound = check.unbound[index] if check.unbound else None
        if unbound is not None or round_ >= len(kept):
            kept[index] = None
            notes.append(f"line {lines.line_of(edit.start) + 1}: {unbound.note() if unbound else DROPPED}")
            continue
        trial = [None if i in blamed[1:] else e for i, e in enumerate(kept)]
        kept[index] = cut_back(text, trial, index, original, spec)
        notes.append(f"line {lines.line_of(edit.start) + 1}: {CUT_BACK if kept[index] is not None else DROPPED}")
    raise AssertionError("unreachable")


def note_reason(note: str) -> str:
    """A note's reason without its line, and with the name and line of an unbound one left out, so that
    notes of one kind count together (the benchmarks' tallies)."""
    reason = note.split(": ", 1)[-1]
    return UNBOUND if reason.startswith(NOTE_START) else reason


def cut_back(text: str, edits: list[Edit | None], index: int, original: Baseline, spec: LanguageSpec
             ) -> Edit | None:
    """Edit `index` cut to its longest run of first lines with which the document passes the check (the
    other edits as given), or None. A regenerated range keeps the line breaks that ended what it replaced."""
    edit = edits[index]
    assert edit is not None
    replaced = text[edit.start : edit.end]
    ending = replaced[len(replaced.rstrip("\r\n")) :] if replaced.endswith("\n") else ""
    lines = edit.new_text.rstrip().split("\n")
    insertion = edit.start if edit.start == edit.end else None
    tried = 0
    for count in range(len(lines) - 1, 0, -1):
        candidate = "\n".join(lines[:count]).rstrip()
        if not candidate.strip() or not lines[count - 1].strip():
            continue
        candidate += ending
        if candidate == replaced or drop_reason(candidate, text, edit.end, insertion) is not None:
            continue
        shorter = Edit(edit.start, edit.end, candidate, edit.token_ids)
        trial = [shorter if i == index else e for i, e in enumerate(edits)]
        if check_filled(text, trial, original, spec).added <= 0:
            return shorter
        tried += 1
        if tried >= MAX_CUTS:
            break
    return None
