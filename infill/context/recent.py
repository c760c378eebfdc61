"""Recently viewed and edited code: a bounded ring of chunks, ranked by the identifiers they share with the
text around the cursor (llama.vim's ring buffer, with Jaccard similarity as its chunk picker)."""

from __future__ import annotations

import keyword
import re
from collections import OrderedDict

from infill.context.chunks import Chunk

IMPORT_LINE = re.compile(r"\s*(import|from)\s")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMON = frozenset(keyword.kwlist) | {"self", "cls", "None", "True", "False"}
RING_CHUNKS = 16
CHUNK_LINES = 32
MIN_SIMILARITY = 0.1
"""A recent chunk sharing fewer identifiers than this with the cursor's surroundings is noise, not context."""


def identifiers(text: str) -> frozenset[str]:
    """The names in `text`, keywords and one-letter names left out."""
    return frozenset(w for w in _IDENTIFIER.findall(text) if len(w) > 1 and w not in _COMMON)


class RecentRing:
    """At most `size` chunks of `lines` lines, newest last. A chunk starts on a multiple of half its
    length, so that looking at the same place again refreshes one chunk instead of adding a shifted copy."""

    def __init__(self, size: int = RING_CHUNKS, lines: int = CHUNK_LINES) -> None:
        if size < 0 or lines < 2:
            raise ValueError(f"a ring of {size} chunks of {lines} lines: need size >= 0 and lines >= 2")
        self.size = size
        self.lines = lines
        self._chunks: OrderedDict[tuple[str, int], tuple[str, frozenset[str]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._chunks)

    def add(self, path: str, text: str, line: int) -> None:
        """The user looked at or edited `path` around 0-based `line`; `text` is the whole document."""
        if self.size == 0:
            return
        all_lines = text.split("\n")
        step = self.lines // 2
        start = max(0, min(line, len(all_lines) - 1) - step // 2) // step * step
        chunk = "\n".join(all_lines[start : start + self.lines]).strip("\n")
        key = (path, start)
        self._chunks.pop(key, None)
        if chunk.strip():
            self._chunks[key] = (chunk, identifiers(chunk))
        while len(self._chunks) > self.size:
            self._chunks.popitem(last=False)

    def ranked(self, words: frozenset[str], exclude: str = "") -> list[Chunk]:
        """Chunks of other documents than `exclude` whose Jaccard similarity to `words` is at least
        MIN_SIMILARITY, most similar first."""
        found = []
        for (path, start), (text, names) in self._chunks.items():
            if path == exclude or not names or not words:
                continue
            score = len(names & words) / len(names | words)
            if score >= MIN_SIMILARITY:
                found.append(Chunk(path, text, "recent", start, score))
        return sorted(found, key=lambda c: -c.score)
