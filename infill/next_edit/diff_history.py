"""The user's recent edits as a client sends them over HTTP, turned into `DocEdit`s: two versions of a file
(Tabby's `original_code` and `current_version`), or a history of unified diffs, oldest first, one file's or
several files' (Mercury Edit's `edit_diff_history`, as Continue writes it).

A diff of the current file is taken back out of its text (`patches.before_patch`), newest first, so each of
its edits has exact offsets in the text after it, as `DocEdit` defines them; the newest must match the text
(`PatchError` otherwise). An older diff that no longer matches, and a diff of another file, become edits of
their hunks' lines alone: enough for the history the model reads above the document (`header`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

from infill.next_edit.diff_runs import Run, changed_runs
from infill.next_edit.edits import DocEdit, changed_region, edit_between
from infill.next_edit.patches import PatchError, before_patch, hunks

MOST_EDITS = 16
"""Edits a history gives at most (`EditHistory.LIMIT`): the model reads the newest four (`header`), and the
regions follow the newest alone; more would cost a `DocEdit` for every changed run of a huge file."""


def line_edits(uri: str, before: str, after: str, cursor: int | None = None) -> list[DocEdit]:
    """The edits turning `before` into `after`, one per run of changed lines, each with offsets in `after`;
    in the order of the file, but the one nearest `cursor` (an offset in `after`) last: the newest, whose
    next edit is asked for. At most `MOST_EDITS`: the nearest one and the runs around it (without a cursor,
    the last ones).

    Only the lines between the two texts' common head and tail are split and compared (`changed_runs`), and
    each run's edit is found in its own lines, so two versions of a huge file that differ in a few places
    cost about their length."""
    if before == after:
        return []
    head, old, new = _middle(before, after)
    runs = changed_runs(old, new)
    lines = after.count("\n", 0, head)
    line = None if cursor is None else after.count("\n", 0, max(0, min(cursor, len(after)))) - lines
    starts = list(itertools.accumulate(map(len, new), initial=head))
    out = []
    for i1, i2, j1, j2 in _kept(runs, line):
        edit = edit_between(uri, "".join(old[i1:i2]), "".join(new[j1:j2]))
        if edit is not None:
            out.append(replace(edit, line=edit.line + lines + j1, start=edit.start + starts[j1],
                               end=edit.end + starts[j1]))
    return out


def _middle(before: str, after: str) -> tuple[int, list[str], list[str]]:
    """(head, old lines, new lines): the whole lines of `before` and `after` between their common head (it
    ends at offset `head` of both) and their common tail."""
    start, old_end, new_end = changed_region(before, after)
    head = after.rfind("\n", 0, start) + 1
    if not (_line_start(before, old_end) and _line_start(after, new_end)):
        found = after.find("\n", new_end)
        new_end = len(after) if found < 0 else found + 1
        old_end = new_end - len(after) + len(before)  # after the same line break of the common tail
    return head, _lines(before[head:old_end]), _lines(after[head:new_end])


def _kept(runs: list[Run], line: int | None) -> list[Run]:
    """The runs `line_edits` makes edits of, in order, the one nearest `line` (of the new lines) last."""
    if line is None or not runs:
        return runs[-MOST_EDITS:]
    nearest = min(range(len(runs)), key=lambda k: _distance(runs[k], line))
    kept = sorted(sorted(range(len(runs)), key=lambda k: abs(k - nearest))[:MOST_EDITS])
    kept.append(kept.pop(kept.index(nearest)))
    return [runs[k] for k in kept]


def _distance(run: Run, line: int) -> int:
    """Lines from `line` to the run's new lines (to the line it inserts before, for a deletion)."""
    first, end = run[2], max(run[3], run[2] + 1)
    return max(first - line, line - end + 1, 0)


def _line_start(text: str, offset: int) -> bool:
    return offset == 0 or text[offset - 1] == "\n"


def _lines(text: str) -> list[str]:
    """`text`'s lines, each with its line break (a line ends at "\\n" alone, as line numbers count them)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


@dataclass(frozen=True)
class FileDiff:
    """One file's section of a diff history: the path its `---`/`+++` lines name ("" when it has none)."""

    path: str
    text: str


_HEADER = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?(\S.*?)(?:\t.*)?$")


def file_diffs(history: str) -> list[FileDiff]:
    """The sections of a diff history, in order: a `---` line followed by a `+++` line starts one; hunks
    before any such header are a section of their own. `PatchError` names a section without a hunk."""
    lines = history.splitlines()
    starts = [i for i, line in enumerate(lines)
              if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")]
    if not starts or any(line.startswith("@@") for line in lines[: starts[0]]):
        starts = [0, *starts]
    sections = []
    for start, stop in zip(starts, [*starts[1:], len(lines)]):
        body = "\n".join(lines[start:stop]) + "\n"
        if not body.strip():
            continue
        named = [_HEADER.match(line) for line in lines[start : start + 2]]
        path = next((m.group(1).strip() for m in reversed(named) if m and m.group(1).strip() != "/dev/null"), "")
        hunks(body)  # PatchError: not a diff
        sections.append(FileDiff(path, body))
    return sections


def same_file(a: str, b: str) -> bool:
    """Whether two paths a client wrote (absolute, relative, a URI, Windows-style) name the same file: one
    ends with the other at a folder boundary. An empty path matches any."""
    x, y = (p.replace("\\", "/").removeprefix("file://").strip("/") for p in (a, b))
    if not x or not y:
        return True
    short, long = sorted((x, y), key=len)
    return long == short or long.endswith("/" + short)


def hunk_edits(uri: str, diff: str) -> list[DocEdit]:
    """Each hunk of `diff` as an edit of its own lines (offsets within them; its line where the hunk says): the
    last `MOST_EDITS`."""
    out = []
    for hunk in hunks(diff)[-MOST_EDITS:]:
        old, new = "".join(f"{line}\n" for line in hunk.old), "".join(f"{line}\n" for line in hunk.new)
        edit = edit_between(uri, old, new)
        if edit is not None:
            out.append(replace(edit, line=edit.line + max(0, hunk.new_start - 1)))
    return out


def diff_history(uri: str, path: str, current: str, history: str, cursor: int | None = None) -> list[DocEdit]:
    """The edits of a diff history, oldest first: the current file's (`path`, whose text is `current`) from its
    diffs taken back out of its text, newest first (the newest split at its changed lines, the one nearest
    `cursor` last); other files' from their hunks, as `{their path}` URIs. `PatchError` when the newest diff
    of the current file does not match its text. Every section must be a diff, but only the newest
    `MOST_EDITS` give edits, and at most that many edits come back (the newest)."""
    sections = file_diffs(history)[-MOST_EDITS:]
    mine = [i for i, s in enumerate(sections) if same_file(s.path, path)]
    edits: dict[int, list[DocEdit]] = {}
    text = current
    for n, i in enumerate(reversed(mine)):
        try:
            before = before_patch(text, sections[i].text)
        except PatchError as error:
            if n == 0:
                raise PatchError(f"the newest diff of {path or 'the file'} does not match its text: {error}") from None
            for j in mine[: len(mine) - n]:
                edits[j] = hunk_edits(uri, sections[j].text)
            break
        edits[i] = line_edits(uri, before, text, cursor) if n == 0 else line_edits(uri, before, text)
        text = before
    for i, section in enumerate(sections):
        if i not in edits:
            edits[i] = hunk_edits(section.path, section.text)
    return [edit for i in range(len(sections)) for edit in edits[i]][-MOST_EDITS:]
