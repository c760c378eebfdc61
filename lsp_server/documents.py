"""Open documents: text, version and an incrementally maintained tree-sitter tree.

The store applies LSP content changes itself (instead of reading pygls' workspace afterwards) because
`Tree.edit` must be described against the text *before* each change. Every change is one `tree.edit`
plus one incremental reparse, so the tree always matches the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import tree_sitter

from .positions import Encoding, byte_point, end_point_after, offset_at

_PARSERS: dict[str, tree_sitter.Parser | None] = {}


def parser_for(language_id: str) -> tree_sitter.Parser | None:
    """A cached parser for the LSP languageId from infill's language table; None for a language it
    lacks (such documents are still synced, just without a tree)."""
    if language_id not in _PARSERS:
        from infill.languages import UnsupportedLanguage, get_language

        try:
            _PARSERS[language_id] = get_language(language_id).parser()
        except UnsupportedLanguage:
            _PARSERS[language_id] = None
    return _PARSERS[language_id]


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
    tree: tree_sitter.Tree | None = field(default=None, repr=False)

    def parse_fresh(self) -> tree_sitter.Tree | None:
        parser = parser_for(self.language_id)
        return None if parser is None else parser.parse(self.text.encode("utf-8"))

    def apply(self, change: TextChange, encoding: Encoding) -> None:
        """Apply one content change to the text and keep the tree in step with it."""
        if change.start is None or change.end is None:
            self.text = change.text
            self.tree = self.parse_fresh()
            return
        start = offset_at(self.text, *change.start, encoding)
        end = max(start, offset_at(self.text, *change.end, encoding))
        start_point = byte_point(self.text, start)
        old_end_point = byte_point(self.text, end)
        self.text = self.text[:start] + change.text + self.text[end:]
        if self.tree is None:
            self.tree = self.parse_fresh()
            return
        new_end_point = end_point_after(start_point, change.text)
        self.tree.edit(
            start_byte=start_point.byte,
            old_end_byte=old_end_point.byte,
            new_end_byte=new_end_point.byte,
            start_point=(start_point.row, start_point.column),
            old_end_point=(old_end_point.row, old_end_point.column),
            new_end_point=(new_end_point.row, new_end_point.column),
        )
        parser = parser_for(self.language_id)
        assert parser is not None
        self.tree = parser.parse(self.text.encode("utf-8"), self.tree)

    def has_syntax_errors(self) -> bool:
        return self.tree is not None and self.tree.root_node.has_error


class UnknownDocument(LookupError):
    def __init__(self, uri: str) -> None:
        super().__init__(f"document {uri} is not open on the server (send textDocument/didOpen first)")


class DocumentStore:
    """Documents by URI, with the position encoding negotiated at initialize."""

    def __init__(self) -> None:
        self.encoding: Encoding = "utf-16"
        self._documents: dict[str, Document] = {}

    def open(self, uri: str, language_id: str, version: int, text: str) -> Document:
        document = Document(uri, language_id, version, text)
        document.tree = document.parse_fresh()
        self._documents[uri] = document
        return document

    def change(self, uri: str, version: int, changes: Iterable[TextChange]) -> Document:
        document = self.get(uri)
        for change in changes:
            document.apply(change, self.encoding)
        document.version = version
        return document

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def get(self, uri: str) -> Document:
        document = self._documents.get(uri)
        if document is None:
            raise UnknownDocument(uri)
        return document

    def __contains__(self, uri: str) -> bool:
        return uri in self._documents
