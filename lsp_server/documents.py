"""Open documents: text and version, kept in step with the client's LSP content changes.

The store applies content changes itself (instead of reading pygls' workspace afterwards), all of a
notification or none. It keeps no syntax tree: infill parses the text it is given, incrementally against
the texts it parsed last (`infill.parse_cache`), so a tree kept here would be a second parse per keystroke
that nothing reads.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from infill.languages import LanguageSpec, language_or_plain

from .positions import Encoding, offset_at

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with lone UTF-16 surrogates (valid JSON, invalid Unicode) replaced by U+FFFD.

    JSON decoding joins every valid pair, so a surrogate left in a `str` is a lone one; it cannot be
    encoded for tree-sitter or the tokenizer. U+FFFD is one UTF-16 unit like the surrogate, so the
    client's positions still point at the same places."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


@dataclass(frozen=True)
class TextChange:
    """One LSP content change: a range (None means the whole document) and its replacement."""

    text: str
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None


@dataclass
class Document:
    uri: str
    language_id: str
    version: int
    text: str

    @property
    def language(self) -> LanguageSpec:
        """The row of infill's language table for this document's languageId; plain text (line
        completions, no parse check) for an id without one."""
        return language_or_plain(self.language_id)

    def apply(self, change: TextChange, encoding: Encoding) -> None:
        """Apply one content change to the text."""
        if change.start is None or change.end is None:
            self.text = change.text
            return
        start = offset_at(self.text, *change.start, encoding)
        end = max(start, offset_at(self.text, *change.end, encoding))
        self.text = self.text[:start] + change.text + self.text[end:]

    def digest(self) -> str:
        """sha256 of the UTF-8 text: lets a client check that the server's copy equals its own."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def edited_line(changes: Iterable[TextChange]) -> int | None:
    """The 0-based line where the last ranged change left the cursor (the end of its new text); None when
    every change replaced the whole document."""
    line = None
    for change in changes:
        if change.start is not None:
            line = change.start[0] + change.text.count("\n")
    return line


class UnknownDocument(LookupError):
    def __init__(self, uri: str) -> None:
        super().__init__(f"document {uri} is not open on the server (send textDocument/didOpen first)")


class DocumentStore:
    """Documents by URI, with the position encoding negotiated at initialize."""

    def __init__(self) -> None:
        self.encoding: Encoding = "utf-16"
        self._documents: dict[str, Document] = {}

    def open(self, uri: str, language_id: str, version: int, text: str) -> Document:
        document = Document(uri, language_id, version, clean_text(text))
        self._documents[uri] = document
        return document

    def change(self, uri: str, version: int, changes: Iterable[TextChange]) -> Document:
        """Apply `changes` in order, all or none: a change that cannot apply (a negative position) leaves
        the document as it was."""
        document = self.get(uri)
        before = document.text
        try:
            for change in changes:
                document.apply(TextChange(clean_text(change.text), change.start, change.end), self.encoding)
        except ValueError:
            document.text = before
            raise
        document.version = version
        return document

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def get(self, uri: str) -> Document:
        document = self._documents.get(uri)
        if document is None:
            raise UnknownDocument(uri)
        return document

    def all(self) -> list[Document]:
        return list(self._documents.values())

    def __contains__(self, uri: str) -> bool:
        return uri in self._documents
