"""The rename rule: the user's edit replaced some text; make the same replacement where the old text still
stands. No model: the baseline next edits are measured against (bench.next_edit's `rename`), and the rival
text the model weighs at each place (`infill.next_edit.suggest`)."""

from __future__ import annotations

import re

from infill.next_edit.diff_runs import changed_runs
from infill.next_edit.edits import TOKEN, DocEdit, pasted


def replacement(old: str, new: str) -> tuple[str, str] | None:
    """What an edit of `old` lines into `new` lines replaced and with what, as source text on one line, or
    None when it is no such replacement (lines only inserted or only deleted, a removed text that spans
    lines or names nothing, an edit past `EDIT_CHARS`).

    The lines are compared token by token (layout ignored). Each differing run of tokens is a (removed,
    added) pair of source text; a pure insertion takes the token before it along, so `f(a)` -> `f(a, b)`
    gives ("a", "a, b"). When every run gives the same pair (one rename made once or several times) that is
    the replacement; otherwise the text from the first differing token to the last one."""
    if not old.strip() or not new.strip() or pasted(old, new):
        return None
    a, b = list(TOKEN.finditer(old)), list(TOKEN.finditer(new))
    runs = changed_runs([m.group() for m in a], [m.group() for m in b])
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


def pattern(removed: str) -> re.Pattern[str]:
    """`removed` as a whole token run: no word character may continue a word it starts or ends with."""
    head = r"(?<!\w)" if re.match(r"\w", removed) else ""
    tail = r"(?!\w)" if re.search(r"\w$", removed) else ""
    return re.compile(head + re.escape(removed) + tail)


def renamed(edit: DocEdit, text: str) -> str | None:
    """`text` with every occurrence of what the edit removed replaced by what it added; None when the edit is
    no replacement or `text` does not hold the removed text."""
    found = replacement(edit.old_lines, edit.new_lines)
    if found is None:
        return None
    removed, added = found
    out, n = pattern(removed).subn(lambda _: added, text)
    return out if n and out != text else None
