"""A chunk of code from elsewhere in the project, and how chunks are written into a canvas's header."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KINDS = ("recent", "outline", "definition")
"""The header's order: the definitions the current file imports sit last, nearest the code that uses them."""


@dataclass(frozen=True)
class Chunk:
    """`text` from `path` (relative to the workspace root, with `/`), starting at 0-based `line`.

    `kind` is one of KINDS; `score` ranks chunks of one kind (higher is more relevant) and decides which
    ones the budget keeps; it plays no part in their order in the header.
    """

    path: str
    text: str
    kind: str
    line: int = 0
    score: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"chunk kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def title(self) -> str:
        """The chunk's first line that is not a decorator (what `-v` shows)."""
        lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        return next((line for line in lines if not line.startswith("@")), lines[0] if lines else "")

    @property
    def key(self) -> tuple[int, str, int, str]:
        """The header's order: kind, path, line, then text (so that equal sets always give equal text)."""
        return KINDS.index(self.kind), self.path, self.line, self.text


def format_chunk(chunk: Chunk, comment_prefix: str) -> str:
    """One chunk as the header writes it: a comment line naming its file, the code, a blank line."""
    return f"{comment_prefix} {chunk.path}\n{chunk.text.rstrip()}\n\n"


def format_chunks(chunks: Sequence[Chunk], comment_prefix: str) -> str:
    """The chunks in the header's fixed order (`Chunk.key`), whatever order they come in; chunks of one
    kind from one file share its comment line."""
    out: list[str] = []
    previous: Chunk | None = None
    for chunk in sorted(chunks, key=lambda c: c.key):
        if previous is not None and (previous.kind, previous.path) == (chunk.kind, chunk.path):
            out[-1] += chunk.text.rstrip() + "\n\n"
        else:
            out.append(format_chunk(chunk, comment_prefix))
        previous = chunk
    return "".join(out)
