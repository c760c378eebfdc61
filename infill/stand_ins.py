"""What stands for a range a fill replaces when `repair.baseline` decides whether the file parsed before.

A hole marker is a comment where code must stand, so a file with one parses only once the marker is read
as the code it stands for: a statement (`pass`), a line that opens a block (`if True:`) or closes one
(`}`): the row's `empty_statement` and `stand_in_lines`, one for every range. A marker in place of several
lines stands for more: a loop header and the `if` inside it (the body below is two levels deeper), a
dict's entries and its closing brace; and the markers of one file stand for different things. Of
HumanEval's 5,815 multi-line tasks written as hole files (bench.holes), 732 parsed with no single stand-in
line, so their fills were judged by tree-sitter's error count, which accepts `if x:` without a body: a file
Python refuses could be written. `parses_apart` tries, range by range, the row's lines, chains of its
opener (one level deeper each) ended by one of them, and repeated closers.
"""

from __future__ import annotations

from collections.abc import Sequence

from infill.languages import LanguageSpec
from infill.parsing import first_error
from infill.postprocess import indent_unit
from infill.spots import Spot

MAX_DEPTH = 3
"""Openers chained before a stand-in's last line (HumanEval's multi-line holes need up to 4 levels)."""
MAX_TRIALS = 96
"""Parses one search may spend (a file broken elsewhere tries every candidate of its first range)."""
_CLOSERS = (")", "]", "}")


def neutral_text(text: str, spots: Sequence[Spot], spec: LanguageSpec,
                 stand_in: str | Sequence[str] | None = None) -> str | None:
    """`text` with each range a spot replaces standing for nothing: `stand_in` (the row's `empty_statement`
    unless given; one of its `stand_in_lines` for a marker whose line opened or closed a block; or one per
    replacing spot, in order) where the range starts a line (a hole marker after its indentation, whole
    lines), nothing elsewhere, its trailing line breaks kept; the lines of a stand-in after its first at the
    range's indentation. None when no spot replaces anything (an insertion leaves the text as it is)."""
    replacing = sorted((s for s in spots if s.end > s.start), key=lambda s: s.start)
    if not replacing:
        return None
    if stand_in is None or isinstance(stand_in, str):
        stand_ins = [spec.empty_statement if stand_in is None else stand_in] * len(replacing)
    else:
        stand_ins = list(stand_in)
    pieces = []
    cursor = 0
    for spot, line in zip(replacing, stand_ins, strict=True):
        replaced = text[spot.start : spot.end]
        line_start = text.rfind("\n", 0, spot.start) + 1
        indent = text[line_start : spot.start]
        lead = replaced[: len(replaced) - len(replaced.lstrip(" \t"))]
        breaks = replaced[len(replaced.rstrip("\r\n")) :]
        code = line.replace("\n", "\n" + indent + lead) if not indent.strip() else ""
        pieces += [text[cursor : spot.start], lead + code + breaks]
        cursor = spot.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def candidates(text: str, spec: LanguageSpec) -> list[str]:
    """What one range may stand for, simplest first: the row's lines and closers, then chains of the row's
    opener (`if True:`, `if (true) {`), each one level deeper, ended by one of those, then repeated
    closers."""
    unit = indent_unit(text) or "    "
    closers = (*_CLOSERS, *sorted(spec.block_closers))
    lines = [line for line in dict.fromkeys((spec.empty_statement, *spec.stand_in_lines, *closers)) if line]
    opener = next((line for line in spec.stand_in_lines if spec.opens_block(line)), None)
    found = list(lines)
    for depth in range(1, MAX_DEPTH + 1):
        if opener is None:
            break
        chain = "".join(f"{unit * level}{opener}\n" for level in range(depth))
        found += [chain + unit * depth + last for last in (opener, *lines)]
    found += ["\n".join([closer] * count) for count in range(2, MAX_DEPTH + 1) for closer in closers]
    return list(dict.fromkeys(found))


def parses_apart(text: str, spots: Sequence[Spot], spec: LanguageSpec) -> bool:
    """Whether `text` parses with a stand-in of its own for each range a spot replaces (`candidates`): each
    range in order takes the candidate that parses, else the one whose first error lies furthest into the
    text after it (the others keep theirs), within MAX_TRIALS parses."""
    replacing = sorted((s for s in spots if s.end > s.start), key=lambda s: s.start)
    if not replacing:
        return False
    options = candidates(text, spec)
    chosen = [spec.empty_statement] * len(replacing)
    trials = 0
    for index in range(len(replacing)):
        best, best_room = chosen[index], None
        for option in options:
            if trials >= MAX_TRIALS:
                return False
            trials += 1
            trial = [*chosen[:index], option, *chosen[index + 1 :]]
            neutral = neutral_text(text, replacing, spec, trial)
            assert neutral is not None
            error = first_error(neutral, spec)
            if error is None:
                return True
            room = len(neutral) - error
            if best_room is None or room < best_room:
                best, best_room = option, room
        chosen[index] = best
    return False
