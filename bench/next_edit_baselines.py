"""Model-free next-edit suggesters for bench.next_edit: `none` (never suggests) and `rename` (repeats the
user's replacement at the next line that still holds what it removed)."""

from __future__ import annotations

import difflib
import re

from bench.next_edit_tasks import TOKEN, Hunk, Suggestion, Task


def never(task: Task) -> Suggestion | None:
    return None


def replacement(edit: Hunk) -> tuple[str, str] | None:
    """What the user's edit replaced and with what, as source text on one line, or None when the edit is
    not such a replacement (lines only inserted or only deleted, several lines removed, nothing named).

    The edit's old and new lines are compared token by token (layout ignored). Each differing run of
    tokens becomes a (removed, added) pair of source text; a pure insertion takes the token before it
    along, so `f(a)` -> `f(a, b)` gives ("a", "a, b"). When every run gives the same pair (one rename
    made once or several times) that pair is the replacement; otherwise it is the text from the first
    differing token to the last one."""
    if not edit.old or not edit.new:
        return None
    old, new = "\n".join(edit.old), "\n".join(edit.new)
    a, b = list(TOKEN.finditer(old)), list(TOKEN.finditer(new))
    matcher = difflib.SequenceMatcher(None, [m.group() for m in a], [m.group() for m in b], autojunk=False)
    runs = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    if not runs:
        return None

    def pair(i1: int, i2: int, j1: int, j2: int) -> tuple[str, str]:
        if i1 == i2 and i1 > 0:
            i1, j1 = i1 - 1, j1 - 1
        removed = old[a[i1].start() : a[i2 - 1].end()] if i2 > i1 else ""
        added = new[b[j1].start() : b[j2 - 1].end()] if j2 > j1 else ""
        return removed, added

    pairs = {pair(*run) for run in runs}
    if len(pairs) == 1:
        removed, added = pairs.pop()
    else:
        removed, added = pair(runs[0][0], runs[-1][1], runs[0][2], runs[-1][3])
    if not removed or "\n" in removed or removed == added or not re.search(r"\w", removed):
        return None
    return removed, added


def _pattern(removed: str) -> re.Pattern[str]:
    """`removed` as a whole token run: no word character may continue a word it starts or ends with."""
    head = r"(?<!\w)" if re.match(r"\w", removed) else ""
    tail = r"(?!\w)" if re.search(r"\w$", removed) else ""
    return re.compile(head + re.escape(removed) + tail)


def rename(task: Task) -> Suggestion | None:
    """The user's replacement (`replacement`) made on the next line that holds the removed text, every
    occurrence on that line: the lines below the user's edit top to bottom, then from the top of the file
    down to the edit (wrapping). None when the edit is no replacement or no other line holds the text."""
    found = replacement(task.user_edit)
    if found is None:
        return None
    removed, added = found
    pattern = _pattern(removed)
    lines = task.current.split("\n")
    first, last = task.user_lines
    order = [*range(last + 1, len(lines) + 1), *range(1, first)]
    for number in order:
        line = lines[number - 1]
        if pattern.search(line):
            start = sum(len(text) + 1 for text in lines[: number - 1])
            return Suggestion(start, start + len(line), pattern.sub(lambda _: added, line))
    return None
