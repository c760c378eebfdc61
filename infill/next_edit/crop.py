"""A huge document cut, before next edits read it, to the part around the user's newest edit that the model's
context can reach.

Next edits search a document for the places an edit implies, parse it, tokenize it into a canvas and parse it
again to judge each edit shown; on a 100,000-line file that cost most of a gigabyte and many seconds, for
places the model reads through a canvas of at most `max_length` tokens. So the document is cut to
`reach.char_budget` characters either side of the newest edit (`reach.cut_around`: on the window planner's
line grid) and everything runs on the kept text; the regions and edits found come back in the whole
document's offsets and lines. A place further from the edit than the model's context reaches is no candidate
(on a document that short, every place is one, as before). An other open document longer than two budgets
(a file the model could not read around its places at once) is not searched.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from infill.next_edit.candidates import Region
from infill.next_edit.edits import DocEdit, pasted
from infill.reach import cut_around


@dataclass(frozen=True)
class Crop:
    """The kept `text`, which starts `offset` characters and `lines` line breaks into the whole document."""

    offset: int
    lines: int
    text: str

    def edit_in(self, edit: DocEdit) -> DocEdit:
        """`edit` (of the whole document) in the kept text's offsets and lines."""
        return replace(edit, line=edit.line - self.lines, start=edit.start - self.offset, end=edit.end - self.offset)

    def region_out(self, region: Region) -> Region:
        """`region` (of the kept text) in the whole document's offsets and lines."""
        return replace(region, first=region.first + self.lines, last=region.last + self.lines,
                       start=region.start + self.offset, end=region.end + self.offset)

    def lines_in(self, lines: tuple[int, int] | None) -> tuple[int, int] | None:
        return None if lines is None else (lines[0] - self.lines, lines[1] - self.lines)


def around_edit(text: str, edit: DocEdit, budget: int) -> Crop:
    """`text` cut to `budget` characters either side of `edit`'s lines (whole when it is that short)."""
    start = min(edit.start, len(text))
    offset, kept = cut_around(text, start, max(start, min(edit.end, len(text))), budget)
    return Crop(offset, text.count("\n", 0, offset), kept)


def follows(edit: DocEdit) -> bool:
    """Whether a next edit may follow `edit`: not a paste or a rewrite (`edits.EDIT_CHARS`)."""
    return not pasted(edit.old_lines, edit.new_lines)


def searchable(text: str, budget: int) -> bool:
    """Whether an other open document is searched for places: two budgets long at most."""
    return len(text) <= 2 * budget
