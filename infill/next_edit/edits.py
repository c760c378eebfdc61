"""One edit of a document, as the next-edit machinery reasons about it: where it happened, the whole lines it
replaced, and what changed inside them, token by token."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from infill.next_edit.diff_runs import changed_runs

TOKEN = re.compile(r"""[A-Za-z_]\w*|\d[\w.]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|#[^\n]*|\S""")
"""Identifiers, numbers, one-line string literals, comments, and any other character on its own."""

EDIT_CHARS = 10_000
"""An edit whose old and new lines hold more characters than this together is a paste or a rewrite, which no
next edit carries on: its tokens are not compared (`replacements` gives none, `rule.replacement` None) and
no next edit follows it (`suggest.propose`). Comparing them would hold a match object for every token of
what may be megabytes."""


def pasted(old: str, new: str) -> bool:
    """Whether an edit of `old` lines into `new` ones is a paste or a rewrite (`EDIT_CHARS`)."""
    return len(old) + len(new) > EDIT_CHARS


def code_tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def changed_region(before: str, after: str) -> tuple[int, int, int]:
    """(start, end in `before`, end in `after`): the smallest range whose replacement turns `before` into
    `after` (common prefix and suffix trimmed; the suffix never overlaps the prefix)."""
    n = min(len(before), len(after))
    lo, hi = 0, n
    while lo < hi:  # the longest common prefix, by halving (slices compare in C)
        mid = (lo + hi + 1) // 2
        if before[:mid] == after[:mid]:
            lo = mid
        else:
            hi = mid - 1
    start = lo
    room = n - start
    lo, hi = 0, room
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if before[len(before) - mid :] == after[len(after) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return start, len(before) - lo, len(after) - lo


@dataclass(frozen=True)
class Replacement:
    """A run of tokens the edit replaced (`old` -> `new`; either may be empty: an insertion or a deletion),
    and the text from the run's first token to its last, before and after (`old_text`, `new_text`)."""

    old: tuple[str, ...]
    new: tuple[str, ...]
    old_text: str = ""
    new_text: str = ""
    old_at: int = 0  # where `old_text` starts in the edit's old lines (for an insertion: where it goes)


@dataclass(frozen=True)
class DocEdit:
    """One edit (a burst of typing, coalesced) of the document `uri`.

    `old_lines` and `new_lines` are the whole lines it touched, before and after (each ending with its line
    break where the document had one); they start at 0-based line `line` of the text after the edit.
    `start`, `end`: the replaced lines' offsets in that text. `accepted`: the edit is a suggestion the user
    accepted (a next edit or a completion), not typing of their own."""

    uri: str
    line: int
    old_lines: str
    new_lines: str
    start: int
    end: int
    at: float = 0.0
    accepted: bool = False
    changes: tuple[Replacement, ...] = field(default=(), compare=False)

    @property
    def removed(self) -> frozenset[str]:
        """Tokens the edit took out (in a replaced run and not among the run's new tokens)."""
        return frozenset(t for r in self.changes for t in r.old) - frozenset(t for r in self.changes for t in r.new)

    @property
    def added(self) -> frozenset[str]:
        return frozenset(t for r in self.changes for t in r.new) - frozenset(t for r in self.changes for t in r.old)

    @property
    def changed_old(self) -> tuple[int, int] | None:
        """Offsets in `old_lines` from the first replaced token to the last, when they are on one line."""
        runs = [(r.old_at, r.old_at + len(r.old_text)) for r in self.changes]
        if not runs:
            return None
        start, end = min(s for s, _ in runs), max(e for _, e in runs)
        return (start, end) if "\n" not in self.old_lines[start:end] else None

    @property
    def end_line(self) -> int:
        """The 0-based line after the edit's last new line."""
        return self.line + self.new_lines.count("\n") + (0 if self.new_lines.endswith("\n") or not self.new_lines else 1)


def edit_between(uri: str, before: str, after: str, at: float = 0.0, accepted: bool = False) -> DocEdit | None:
    """The edit that turns `before` into `after`, widened to whole lines; None when they are equal."""
    if before == after:
        return None
    start, old_end, new_end = changed_region(before, after)
    line_start = before.rfind("\n", 0, start) + 1
    old_stop = _line_end(before, old_end if old_end > start else start)
    new_stop = _line_end(after, new_end if new_end > start else start)
    old_lines, new_lines = before[line_start:old_stop], after[line_start:new_stop]
    return DocEdit(uri, after.count("\n", 0, line_start), old_lines, new_lines, line_start, new_stop, at, accepted,
                   replacements(old_lines, new_lines))


def _line_end(text: str, offset: int) -> int:
    """The offset after the line break ending the line that holds `offset - 1` (or `offset` at a line start)."""
    if offset > 0 and text[offset - 1] == "\n":
        return offset
    stop = text.find("\n", offset)
    return len(text) if stop < 0 else stop + 1


def replacements(old: str, new: str) -> tuple[Replacement, ...]:
    """The runs of tokens that differ between `old` and `new`, in order (none past `EDIT_CHARS`)."""
    if pasted(old, new):
        return ()
    a, b = list(TOKEN.finditer(old)), list(TOKEN.finditer(new))
    runs = changed_runs([m.group() for m in a], [m.group() for m in b])
    return tuple(Replacement(tuple(m.group() for m in a[i1:i2]), tuple(m.group() for m in b[j1:j2]),
                             _between(old, a[i1:i2]), _between(new, b[j1:j2]),
                             a[i1].start() if i1 < len(a) else len(old))
                 for i1, i2, j1, j2 in runs)


def _between(text: str, run: list[re.Match[str]]) -> str:
    return text[run[0].start() : run[-1].end()] if run else ""
