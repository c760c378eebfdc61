"""The rename rule: the user's edit replaced some text; make the same replacement where the old text still
stands. No model: the baseline next edits are measured against, and a second proposal the model judges
(`infill.next_edit.suggest`)."""

from __future__ import annotations

from infill.next_edit.candidates import _WORD, _pattern
from infill.next_edit.edits import DocEdit


def renamed(edit: DocEdit, region_text: str) -> str | None:
    """`region_text` with each run the edit replaced (a run holding a word) replaced the same way, where it
    occurs there; None when nothing in it holds a replaced run."""
    out, changed = region_text, False
    for change in edit.changes:
        if not change.old or not any(_WORD.match(t) for t in change.old):
            continue
        pattern = _pattern(change.old)
        out, n = pattern.subn(change.new_text.replace("\\", "\\\\"), out)
        changed = changed or n > 0
    return out if changed and out != region_text else None


def next_place(edit: DocEdit, text: str, cursor_line: int) -> tuple[int, int, str] | None:
    """(start, end, new text) of the first line below `cursor_line` (then from the top, wrapping) that holds a
    run the edit replaced, outside the edit's own lines, rewritten by `renamed`; None when there is none."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    edited = range(edit.line, max(edit.line + 1, edit.end_line))
    order = [*range(cursor_line + 1, len(lines)), *range(0, cursor_line + 1)]
    for n in order:
        if n in edited:
            continue
        new = renamed(edit, lines[n])
        if new is not None:
            return starts[n], starts[n] + len(lines[n]), new
    return None

