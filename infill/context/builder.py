"""Rank the project's chunks for one cursor, keep what fits the budget, and keep it while it still holds."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infill.context.chunks import Chunk, format_chunk, format_chunks
from infill.context.definitions import imported_definitions
from infill.context.outline import outline_beyond
from infill.context.recent import IMPORT_LINE, RecentRing, identifiers
from infill.languages import LanguageSpec, get_language
from infill.positions import LineIndex

DEFAULT_TOKENS = 256
"""The header's budget. The bundled model reads 1,024 tokens: a quarter for the project leaves the window
768, and the header is prefilled once per chunk set, not per keystroke (bench.lsp_latency)."""
NEAR_LINES = 16
"""Lines either side of the cursor whose identifiers decide what is relevant."""
HOLD_LINES = 32
"""A document keeps its chunk set while the cursor stays in the same block of this many lines (the canvas's
START_GRID), the file's imports stay the same and the files its definitions come from do not change, even
when other names near the cursor would now rank other chunks first (`ContextBuilder._still_current`)."""


def usable_budget(tokens: int, max_length: int) -> int:
    """`tokens`, but at most half the model's context: the header is never cropped, so a larger one would
    leave the document no room (or not fit at all)."""
    return max(0, min(tokens, max_length // 2))


@dataclass(frozen=True)
class RepoContext:
    chunks: tuple[Chunk, ...]
    header: str
    tokens: int

    def describe(self) -> list[str]:
        """One line per chunk for `-v` and logs: kind, where it comes from, its first line."""
        return [f"{c.kind:10} {c.path}:{c.line + 1}  {c.title[:60]}" for c in self.chunks]


EMPTY = RepoContext((), "", 0)


@dataclass(frozen=True)
class _Held:
    key: tuple[Any, ...]
    context: RepoContext
    sources: tuple[tuple[str, str], ...]
    """(relative path, digest of its text) of each file the held definitions come from."""


class ContextBuilder:
    """Chunks of one workspace (`root`; None: only the ring and the current file's outline).

    Open documents are told to the builder with `saw` (their text wins over the file on disk); `build`
    gives the context for a cursor. `excludes` are glob patterns of paths (relative to `root`) never read.
    """

    def __init__(self, root: str | Path | None, tokenizer: Any, *, budget: int = DEFAULT_TOKENS,
                 excludes: Sequence[str] = (), max_length: int = 1024, ring: RecentRing | None = None) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self.tokenizer = tokenizer
        self.budget = usable_budget(budget, max_length)
        self.excludes = tuple(excludes)
        self.max_length = max_length
        self.ring = ring if ring is not None else RecentRing()
        self._open: dict[Path, str] = {}
        self._held: dict[str, _Held] = {}
        self._tokens: dict[str, int] = {}

    def saw(self, path: str | Path, text: str, line: int | None = None) -> None:
        """The user has `path` open with `text` and viewed or edited it around 0-based `line` (None: the
        document was only opened or changed elsewhere; its text is kept, the ring not touched)."""
        resolved = Path(path).resolve()
        self._open[resolved] = text
        if line is not None and not self._excluded(resolved):
            self.ring.add(self.relative(resolved), text, line)

    def closed(self, path: str | Path) -> None:
        """`path` is no longer open: the file on disk speaks for it again (its ring chunks stay)."""
        self._open.pop(Path(path).resolve(), None)

    def relative(self, path: Path) -> str:
        if self.root is not None and path.is_relative_to(self.root):
            return path.relative_to(self.root).as_posix()
        return path.name

    def read(self, path: Path) -> str | None:
        """An open document's text, else the file's, else None (missing, unreadable or excluded)."""
        if path in self._open:
            return self._open[path]
        if self._excluded(path):
            return None
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def build(self, path: str | Path | None, text: str, offset: int,
              language: str | LanguageSpec = "python") -> RepoContext:
        """The context for a cursor at `offset` of `text` (the document at `path`, None for an unsaved one)."""
        if self.budget <= 0:
            return EMPTY
        spec = get_language(language)
        here = Path(path).resolve() if path is not None else None
        name = self.relative(here) if here is not None else ""
        lines = LineIndex(text)
        line = lines.line_of(min(max(offset, 0), len(text)))
        near = text[lines.line_start(max(0, line - NEAR_LINES)): lines.line_end(min(lines.line_count - 1,
                                                                                        line + NEAR_LINES))]
        words = identifiers("\n".join(ln for ln in near.split("\n") if not IMPORT_LINE.match(ln)))
        others: list[Chunk] = []
        if spec.id == "python":
            block = lines.line_start(min(line // HOLD_LINES * HOLD_LINES, lines.line_count - 1))
            others += outline_beyond(text, block, name, self._window_chars())  # the same within a block
        others += self.ring.ranked(words, exclude=name)
        imports = "\n".join(ln for ln in text.split("\n") if IMPORT_LINE.match(ln))
        key = (name, spec.id, line // HOLD_LINES, _digest(imports))
        held = self._held.get(name)
        if held is not None and held.key == key and self._still_current(held, others):
            return held.context  # the imported files are not read again while the set holds
        candidates = list(others)
        if here is not None and spec.id == "python":
            candidates += imported_definitions(self, here, text, line, NEAR_LINES)
        context = self.fit(candidates, spec.comment_prefix)
        sources = tuple(sorted({c.path for c in context.chunks if c.kind == "definition"}))
        self._held[name] = _Held(key, context, tuple((p, self._file_digest(p)) for p in sources))
        return context

    def _still_current(self, held: _Held, others: Sequence[Chunk]) -> bool:
        """Whether a held set may stay: the files its definitions come from are unchanged, and its other
        chunks are still among the outline and recent candidates `others` as they were. A definition that
        merely ranks lower now (the names near the cursor moved on) stays: that is the hysteresis."""
        if any(self._file_digest(path) != digest for path, digest in held.sources):
            return False
        texts = {(c.kind, c.path, c.text) for c in others}
        return all((c.kind, c.path, c.text) in texts for c in held.context.chunks if c.kind != "definition")

    def _file_digest(self, relative: str) -> str:
        text = self.read(self.root / relative) if self.root is not None else None
        return _digest(text) if text is not None else ""

    def fit(self, candidates: Sequence[Chunk], comment_prefix: str, max_chars: int | None = None) -> RepoContext:
        """The most relevant chunks whose formatted tokens fit the budget, in the header's order:
        definitions first, then recent chunks, then the outline, each by score (the engine server passes
        a client's own chunks here). `max_chars`: candidates past that many characters, in rank order,
        are not tokenized (a client may send megabytes of them)."""
        priority = {"definition": 0, "recent": 1, "outline": 2}
        ranked = sorted(candidates, key=lambda c: (priority[c.kind], -c.score, c.key))
        kept: list[Chunk] = []
        seen: set[str] = set()
        left = self.budget
        chars = 0
        for chunk in ranked:
            chars += len(chunk.text)
            if max_chars is not None and chars > max_chars:
                break
            if chunk.text in seen:
                continue
            cost = self._count(format_chunk(chunk, comment_prefix))
            if cost <= left:
                kept.append(chunk)
                seen.add(chunk.text)
                left -= cost
        ordered = tuple(sorted(kept, key=lambda c: c.key))
        header = format_chunks(ordered, comment_prefix)
        return RepoContext(ordered, header, self._count(header) if header else 0)

    def _count(self, text: str) -> int:
        if (count := self._tokens.get(text)) is None:
            if len(self._tokens) > 4096:
                self._tokens.clear()
            count = self._tokens[text] = len(self.tokenizer.encode(text, add_special_tokens=False))
        return count

    def _window_chars(self) -> int:
        """About how many characters of the current file the canvas keeps above the cursor."""
        return max(0, (self.max_length - self.budget) // 2) * 3

    def _excluded(self, path: Path) -> bool:
        name = self.relative(path)
        return any(fnmatch.fnmatch(name, pattern) for pattern in self.excludes)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()
