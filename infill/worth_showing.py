"""Whether a shaped result is worth showing at all (filter 5 of `infill.postprocess`): not when it is
empty or only repeats what already stands next to the spot."""

from __future__ import annotations


def drop_reason(new_text: str, text: str, end: int, start: int | None = None, needs_closer: bool = False) -> str | None:
    """Why the result is not worth showing, or None. `start` (insertions only) enables the check
    against the line above the cursor. A line of closing brackets alone (`}`, `});`) repeats another only
    at the same indentation: `    }` under `        }` closes the block around it (in SantaCoder's
    JavaScript tasks, the truth of several fills dropped as repeats), and never when the file needs a
    closer where the cursor is (`LineShape.closes`)."""
    stripped = new_text.strip()
    if not stripped:
        return "empty result"
    first = next(line for line in new_text.split("\n") if line.strip())
    if start is not None and not new_text.startswith("\n"):
        first = text[text.rfind("\n", 0, start) + 1 : start] + first  # the cursor line as it will read
    if text[end:].lstrip().startswith(stripped):
        rest = text[end:].split("\n", 1)[0]
        after = (text[text.rfind("\n", 0, end) + 1 : end] + rest if rest.strip()
                 else next((line for line in text[end:].split("\n") if line.strip()), ""))
        if not _closers_only(first) or _indent(after) == _indent(first):
            return "the result repeats the text after the spot"
    if start is not None:
        above = [line for line in text[:start].split("\n")[:-1] if line.strip()]
        if above and first.strip() == above[-1].strip() and (not _closers_only(first) or (
                not needs_closer and _indent(first) == _indent(above[-1]))):
            return "the result repeats the line above"
    return None


def _closers_only(line: str) -> bool:
    return bool(line.strip()) and set(line.strip()) <= set(")]};,")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
