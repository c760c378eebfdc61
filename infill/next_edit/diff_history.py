"""The user's recent edits as a client sends them over HTTP, turned into `DocEdit`s: two versions of a file
(Tabby's `original_code` and `current_version`), or a history of unified diffs, oldest first, one file's or
several files' (Mercury Edit's `edit_diff_history`, as Continue writes it).

A diff of the current file is taken back out of its text (`patches.before_patch`), newest first, so each of
its edits has exact offsets in the text after it, as `DocEdit` defines them; the newest must match the text
(`PatchError` otherwise). An older diff that no longer matches, and a diff of another file, become edits of
their hunks' lines alone: enough for the history the model reads above the document (`header`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace

from infill.next_edit.edits import DocEdit, edit_between
from infill.next_edit.patches import PatchError, before_patch, hunks


def line_edits(uri: str, before: str, after: str, cursor: int | None = None) -> list[DocEdit]:
    """The edits turning `before` into `after`, one per run of changed lines, each with offsets in `after`;
    in the order of the file, but the one nearest `cursor` (an offset in `after`) last: the newest, whose
    next edit is asked for."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    found: list[tuple[int, int, DocEdit]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edit = edit_between(uri, "".join(new[:j1] + old[i1:i2] + new[j2:]), after)
        if edit is not None:
            found.append((j1, max(j2, j1 + 1), edit))
    if cursor is not None and found:
        line = after.count("\n", 0, max(0, min(cursor, len(after))))
        nearest = min(range(len(found)), key=lambda k: max(found[k][0] - line, line - found[k][1] + 1, 0))
        found.append(found.pop(nearest))
    return [edit for _, _, edit in found]


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
    """Each hunk of `diff` as an edit of its own lines (offsets within them; its line where the hunk says)."""
    out = []
    for hunk in hunks(diff):
        old, new = "".join(f"{line}\n" for line in hunk.old), "".join(f"{line}\n" for line in hunk.new)
        edit = edit_between(uri, old, new)
        if edit is not None:
            out.append(replace(edit, line=edit.line + max(0, hunk.new_start - 1)))
    return out


def diff_history(uri: str, path: str, current: str, history: str, cursor: int | None = None) -> list[DocEdit]:
    """The edits of a diff history, oldest first: the current file's (`path`, whose text is `current`) from its
    diffs taken back out of its text, newest first (the newest split at its changed lines, the one nearest
    `cursor` last); other files' from their hunks, as `{their path}` URIs. `PatchError` when the newest diff
    of the current file does not match its text."""
    sections = file_diffs(history)
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
    return [edit for i in range(len(sections)) for edit in edits[i]]
