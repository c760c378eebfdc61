"""The next-edit tasks of bench.next_edit: line hunks, what a hunk changes at token level, and the loader of
the vendored set (bench/data/next_edit: `tasks.jsonl` plus the files at release N in `sources.tar.xz`).

A hunk is one run of changed lines between two versions of a file (`difflib.SequenceMatcher` over lines,
no context lines): the `old` lines starting at 1-based `start` are replaced by the `new` lines. Its
*changes* are the token-level differences of its old and new text (`Change`), the unit two hunks must share
to "change the same things" (`same_change`).
"""

from __future__ import annotations

import difflib
import json
import keyword
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from infill.next_edit import edits

DATA = Path(__file__).resolve().parent / "data" / "next_edit"
ARCHIVE = DATA / "sources.tar.xz"
TASKS = DATA / "tasks.jsonl"

TOKEN = edits.TOKEN  # the next-edit machinery's own token grammar


class DataError(RuntimeError):
    pass


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def is_word(token: str) -> bool:
    """An identifier that is not a keyword, or a number, string or comment: a token whose change names
    something (a lone bracket, comma or keyword changed in two places is no shared intent)."""
    if token[0].isalpha() or token[0] == "_":
        return not keyword.iskeyword(token)
    return token[0].isdigit() or token[0] in "\"'#"


@dataclass(frozen=True)
class Hunk:
    """`old` lines from 1-based line `start` replaced by `new` (old empty: inserted before line `start`)."""

    start: int
    old: tuple[str, ...]
    new: tuple[str, ...]

    @property
    def end(self) -> int:
        """The last old line (start - 1 for an insertion)."""
        return self.start + len(self.old) - 1

    @property
    def size(self) -> int:
        return len(self.old) + len(self.new)

    def apply(self, lines: Sequence[str]) -> list[str]:
        if list(lines[self.start - 1 : self.end]) != list(self.old):
            raise DataError(f"hunk at line {self.start} does not match the file")
        return [*lines[: self.start - 1], *self.new, *lines[self.end :]]

    def shifted(self, by: int) -> Hunk:
        return Hunk(self.start + by, self.old, self.new)


def hunks(before: Sequence[str], after: Sequence[str]) -> list[Hunk]:
    """The line hunks that turn `before` into `after`, top to bottom."""
    matcher = difflib.SequenceMatcher(None, list(before), list(after), autojunk=False)
    return [Hunk(i1 + 1, tuple(before[i1:i2]), tuple(after[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


@dataclass(frozen=True)
class Change:
    """One token-level difference inside a hunk: `removed` tokens replaced by `added` ones. A pure
    insertion keeps the token before it (`anchor`), so `f(a)` -> `f(a, b)` and `g(c)` -> `g(c, b)` are
    different insertions while `x)` -> `x, b)` at two call sites of the same `x` are the same one."""

    removed: tuple[str, ...]
    added: tuple[str, ...]
    anchor: str = ""

    @property
    def names_something(self) -> bool:
        return any(map(is_word, self.removed or self.added))


def changes(old: Sequence[str], new: Sequence[str]) -> list[Change]:
    """The token-level differences between old and new lines (layout ignored), in order."""
    a, b = tokens("\n".join(old)), tokens("\n".join(new))
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [Change(tuple(a[i1:i2]), tuple(b[j1:j2]), a[i1 - 1] if i1 == i2 and i1 else "")
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def same_change(first: Hunk, second: Hunk) -> Change | None:
    """The change both hunks make, or None: "changes the same things" means the two hunks share a
    token-level `Change` exactly (the same removed tokens replaced by the same added tokens; for a pure
    insertion, the same tokens inserted after the same token) that names something (`is_word`): the same
    old name replaced by the same new name, the same literal rewritten, the same argument added to or
    dropped from the same call. The first shared change in `first`'s order is returned."""
    theirs = {c for c in changes(second.old, second.new) if c.names_something}
    return next((c for c in changes(first.old, first.new) if c in theirs), None)


@dataclass(frozen=True)
class Task:
    """One next-edit task (bench/data/next_edit/tasks.jsonl with the file texts filled in). Lines are
    1-based; `user_edit` is in `before`, `target` and `alternatives` in `current`."""

    id: str
    package: str
    version_from: str
    version_to: str
    path: str
    kind: Literal["related", "noise"]
    before: str
    current: str
    expected: str
    user_edit: Hunk
    target: Hunk | None
    cursor_line: int
    alternatives: tuple[Hunk, ...] = ()
    relation: Change | None = None
    language: str = "python"

    @property
    def user_lines(self) -> tuple[int, int]:
        """The lines of `current` the user's edit wrote (for a deletion: the line after the gap)."""
        start = self.user_edit.start
        return start, max(start, start + len(self.user_edit.new) - 1)


@dataclass(frozen=True)
class Suggestion:
    """Replace `current[start:end]` (str offsets) with `new_text`."""

    start: int
    end: int
    new_text: str

    def apply(self, text: str) -> str:
        if not 0 <= self.start <= self.end <= len(text):
            raise ValueError(f"suggestion [{self.start}, {self.end}) outside a text of {len(text)} characters")
        return text[: self.start] + self.new_text + text[self.end :]


def cursor_line(edit: Hunk, current_lines: int) -> int:
    """The last line the user's edit wrote; for a pure deletion the line that moved up into the gap."""
    if edit.new:
        return edit.start + len(edit.new) - 1
    return max(1, min(edit.start, current_lines))


def _hunk(row: dict[str, Any]) -> Hunk:
    return Hunk(row["start_line"], tuple(row["old_lines"]), tuple(row["new_lines"]))


def task_from_row(row: dict[str, Any], before: str) -> Task:
    """A `tasks.jsonl` row made whole with its file's text at release N; checks that every hunk matches."""
    lines = before.split("\n")
    user = _hunk(row["user_edit"])
    current_lines = user.apply(lines)
    target = _hunk(row["target"]) if row["target"] else None
    expected_lines = target.apply(current_lines) if target else current_lines
    relation = row.get("relation")
    return Task(row["id"], row["package"], row["version_from"], row["version_to"], row["path"], row["kind"],
                before, "\n".join(current_lines), "\n".join(expected_lines), user, target,
                row["cursor_line"], tuple(_hunk(h) for h in row.get("alternatives", ())),
                Change(tuple(relation["removed"]), tuple(relation["added"]), relation["anchor"]) if relation
                else None, row.get("language", "python"))


def hunk_row(hunk: Hunk) -> dict[str, Any]:
    """A hunk as tasks.jsonl stores it (`end_line`: its last old line, start_line - 1 for an insertion)."""
    return {"start_line": hunk.start, "end_line": hunk.end, "old_lines": list(hunk.old),
            "new_lines": list(hunk.new)}


@cache
def archive_texts(archive: Path = ARCHIVE) -> dict[str, str]:
    """Every file of the archive, by its path inside it."""
    if not archive.is_file():
        raise DataError(f"next-edit sources missing: {archive}")
    out: dict[str, str] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                out[member.name] = handle.read().decode("utf-8")
    return out


def load_tasks(root: Path = DATA, packages: Sequence[str] = ()) -> list[Task]:
    """The vendored tasks (of the named packages; none: all), in file order."""
    path = root / "tasks.jsonl"
    if not path.is_file():
        raise DataError(f"next-edit tasks missing: {path}")
    texts = archive_texts(root / "sources.tar.xz")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    unknown = set(packages) - {row["package"] for row in rows}
    if unknown:
        raise DataError(f"unknown packages {', '.join(sorted(unknown))}; the data has "
                        f"{', '.join(sorted({row['package'] for row in rows}))}")
    out = []
    for row in rows:
        if packages and row["package"] not in packages:
            continue
        if row["file"] not in texts:
            raise DataError(f"{row['id']}: {row['file']} is not in {root / 'sources.tar.xz'}")
        try:
            out.append(task_from_row(row, texts[row["file"]]))
        except DataError as error:
            raise DataError(f"{row['id']}: {error}") from None
    return out
