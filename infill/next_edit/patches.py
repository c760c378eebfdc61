"""The user's edit from a unified diff (`git diff`, `diff -u`) already applied to a file: the file as it was
before, recovered by taking the diff's hunks back out of the file as it is now."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """A diff that is not a unified diff of the file, or does not match it; the message says where."""


@dataclass(frozen=True)
class Hunk:
    new_start: int  # 1-based line of the hunk's first line in the new text (0 with no lines there)
    old: list[str]
    new: list[str]


def hunks(patch: str) -> list[Hunk]:
    """The hunks of the first file section of `patch`."""
    found: list[Hunk] = []
    lines = patch.splitlines()
    i = 0
    started = False
    while i < len(lines):
        match = _HUNK.match(lines[i])
        if match is None:
            if started and lines[i].startswith(("--- ", "diff ")):
                break  # the next file's section
            i += 1
            continue
        started = True
        old_count = int(match.group(2) or "1")
        new_count = int(match.group(4) or "1")
        old: list[str] = []
        new: list[str] = []
        i += 1
        while i < len(lines) and (len(old) < old_count or len(new) < new_count):
            line = lines[i]
            if line.startswith("\\"):  # "\ No newline at end of file"
                i += 1
                continue
            tag, body = (line[:1], line[1:]) if line else (" ", "")
            if tag == " ":
                old.append(body)
                new.append(body)
            elif tag == "-":
                old.append(body)
            elif tag == "+":
                new.append(body)
            else:
                raise PatchError(f"line {i + 1} of the diff: {line[:40]!r} is not a hunk line")
            i += 1
        if len(old) != old_count or len(new) != new_count:
            raise PatchError(f"the hunk at line {i} of the diff ends early")
        found.append(Hunk(int(match.group(3)), old, new))
    if not found:
        raise PatchError("no hunk (@@ -a,b +c,d @@) in the diff")
    return found


def before_patch(current: str, patch: str) -> str:
    """`current` with `patch`'s hunks taken back out: the text the patch was applied to (built in one pass over
    the lines, so many hunks of a long file cost its length once)."""
    lines = current.split("\n")
    out: list[str] = []
    done = 0
    for hunk in sorted(hunks(patch), key=lambda h: h.new_start):
        at = max(0, hunk.new_start - 1) if hunk.new else hunk.new_start
        if at < done:
            raise PatchError(f"the diff's hunk at line {hunk.new_start} overlaps the hunk before it")
        if lines[at : at + len(hunk.new)] != hunk.new:
            raise PatchError(f"the diff's hunk at line {hunk.new_start} does not match the file there")
        out += lines[done:at]
        out += hunk.old
        done = at + len(hunk.new)
    out += lines[done:]
    return "\n".join(out)
