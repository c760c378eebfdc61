"""Model-free next-edit suggesters for bench.next_edit: `none` (never suggests) and `rename` (repeats the
user's replacement at the next line that still holds what it removed)."""

from __future__ import annotations

from bench.next_edit_tasks import Suggestion, Task
from infill.next_edit.rule import pattern, replacement


def never(task: Task) -> Suggestion | None:
    return None


def rename(task: Task) -> Suggestion | None:
    """The user's replacement (`replacement`) made on the next line that holds the removed text, every
    occurrence on that line: the lines below the user's edit top to bottom, then from the top of the file
    down to the edit (wrapping). None when the edit is no replacement or no other line holds the text."""
    found = replacement("\n".join(task.user_edit.old), "\n".join(task.user_edit.new))
    if found is None:
        return None
    removed, added = found
    holds = pattern(removed)
    lines = task.current.split("\n")
    first, last = task.user_lines
    order = [*range(last + 1, len(lines) + 1), *range(1, first)]
    for number in order:
        line = lines[number - 1]
        if holds.search(line):
            start = sum(len(text) + 1 for text in lines[: number - 1])
            return Suggestion(start, start + len(line), holds.sub(lambda _: added, line))
    return None
