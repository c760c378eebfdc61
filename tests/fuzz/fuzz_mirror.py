"""The fuzz client's own copy of every open document: the oracle the server's copy is checked against.

It applies LSP content changes by the rules of the LSP specification, written here independently of
the server's code: positions count UTF-16 code units; a character past a line's content (which ends
before "\\r\\n" or "\\n") clamps to it; a line past the last one means the end of the text; a
character inside a surrogate pair rounds down to the pair's start; a range whose end precedes its start
is an insertion at the start. Two choices of the server are part of the contract: a lone surrogate
becomes U+FFFD, and a list of changes applies all or none.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def offset_of(text: str, line: int, character: int) -> int:
    """str offset of an LSP (line, UTF-16 character) position in `text`."""
    if line < 0 or character < 0:
        raise ValueError("negative position")
    start = 0
    for _ in range(line):
        newline = text.find("\n", start)
        if newline < 0:
            return len(text)
        start = newline + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if end > start and text[end - 1] == "\r" and end < len(text):
        end -= 1
    units = 0
    for offset in range(start, end):
        units += 2 if ord(text[offset]) > 0xFFFF else 1
        if units > character:
            return offset
    return end


def utf16_position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return line, len(text[start:offset].encode("utf-16-le")) // 2


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Mirror:
    texts: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)

    def open(self, uri: str, version: int, text: str) -> None:
        self.texts[uri] = clean(text)
        self.versions[uri] = version

    def close(self, uri: str) -> None:
        self.texts.pop(uri, None)
        self.versions.pop(uri, None)

    def change(self, uri: str, version: int, changes: list[tuple[tuple[int, int, int, int] | None, str]]) -> None:
        """Apply (range or None, text) changes; unopened documents and bad positions change nothing."""
        if uri not in self.texts:
            return
        text = self.texts[uri]
        try:
            for span, new_text in changes:
                if span is None:
                    text = clean(new_text)
                    continue
                start = offset_of(text, span[0], span[1])
                end = max(start, offset_of(text, span[2], span[3]))
                text = text[:start] + clean(new_text) + text[end:]
        except ValueError:
            return
        self.texts[uri] = text
        self.versions[uri] = version

    def state(self, uri: str) -> tuple[int, str] | None:
        if uri not in self.texts:
            return None
        return self.versions[uri], digest(self.texts[uri])
