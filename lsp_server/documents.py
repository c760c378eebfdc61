"""Open documents: text, version and an incrementally maintained tree-sitter tree.

The store applies LSP content changes itself (instead of reading pygls' workspace afterwards) because
`Tree.edit` must be described against the text *before* each change. Every change is one `tree.edit`
plus one incremental reparse, so the tree always matches the text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import tree_sitter

from infill.languages import LanguageSpec, UnsupportedLanguage, get_language, language_or_plain

from .positions import Encoding, byte_point, end_point_after, offset_at

_PARSERS: dict[str, tree_sitter.Parser | None] = {}
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


def parser_for(language_id: str) -> tree_sitter.Parser | None:
    """A cached parser for the LSP languageId from infill's language table; None for a language it
    lacks (such documents are still synced, just without a tree)."""
    if language_id not in _PARSERS:
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

    @property
    def language(self) -> LanguageSpec:
        """The row of infill's language table for this document's languageId; plain text (line
        completions, no parse check) for an id without one."""
        return language_or_plain(self.language_id)

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

    def digest(self) -> str:
        """sha256 of the UTF-8 text: lets a client check that the server's copy equals its own."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

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
        document = Document(uri, language_id, version, clean_text(text))
        document.tree = document.parse_fresh()
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
            document.tree = document.parse_fresh()  # the tree was edited in place
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

    def __contains__(self, uri: str) -> bool:
        return uri in self._documents
