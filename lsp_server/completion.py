"""From model replacements to `InlineCompletionItem`s and fallback `CompletionItem`s.

Two rules of LSP 3.18 shape everything here:
- an inline item's range must start and end on one line and contain the cursor;
- with `selectedCompletionInfo`, items must use the selected item's range and their text must start
  with the selected item's text. The model therefore sees the document *as if* the selection were
  already inserted, and its answer is glued after the selected text.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from lsprotocol import types

from .inference import Replacement
from .positions import Encoding, offset_at, position_at

ACCEPT_COMMAND = "dcomplete.accepted"


@dataclass(frozen=True)
class CompletionQuery:
    """What the model completes: `text` with the cursor at `offset`.

    With a selected completion item, `text` already contains the selected text, `selection` is its
    (start, end) in the document and `selected_text` the text the items must start with.
    """

    document_text: str
    text: str
    offset: int
    selection: tuple[int, int] | None = None
    selected_text: str = ""


@dataclass(frozen=True)
class Suggestion:
    """A single-line-range suggestion in document offsets."""

    start: int
    end: int
    insert_text: str


def build_query(
    text: str,
    position: types.Position,
    encoding: Encoding,
    selected: types.SelectedCompletionInfo | None = None,
) -> CompletionQuery:
    cursor = offset_at(text, position.line, position.character, encoding)
    if selected is None:
        return CompletionQuery(text, text, cursor)
    start = offset_at(text, selected.range.start.line, selected.range.start.character, encoding)
    end = max(start, offset_at(text, selected.range.end.line, selected.range.end.character, encoding))
    patched = text[:start] + selected.text + text[end:]
    return CompletionQuery(text, patched, start + len(selected.text), (start, end), selected.text)


def _one_line(text: str) -> str:
    return text.split("\n", 1)[0]


def to_suggestion(query: CompletionQuery, replacement: Replacement, multiline: bool) -> Suggestion | None:
    """The suggestion a replacement becomes, or None when LSP cannot show it."""
    new_text = replacement.new_text if multiline else _one_line(replacement.new_text)
    if query.selection is not None:
        return _after_selection(query, replacement, new_text)
    text, cursor = query.text, query.offset
    start, end = min(replacement.start, cursor), max(replacement.end, cursor)
    if "\n" in text[start:end]:
        return None
    insert_text = text[start : replacement.start] + new_text + text[replacement.end : end]
    if insert_text == text[start:end] or not insert_text[len(text[start:cursor]) :].strip():
        return None
    return Suggestion(start, end, insert_text)


def _after_selection(query: CompletionQuery, replacement: Replacement, new_text: str) -> Suggestion | None:
    """Only insertions at the (virtual) cursor fit the selection's range; text the model chose to
    replace after the cursor must come back at the end of its answer, and is trimmed there."""
    assert query.selection is not None
    if replacement.start != query.offset:
        return None
    displaced = query.text[query.offset : replacement.end]
    if displaced:
        if not new_text.endswith(displaced):
            return None
        new_text = new_text[: len(new_text) - len(displaced)]
    if not new_text.strip():
        return None
    start, end = query.selection
    return Suggestion(start, end, query.selected_text + new_text)


def to_range(text: str, start: int, end: int, encoding: Encoding) -> types.Range:
    start_line, start_char = position_at(text, start, encoding)
    end_line, end_char = position_at(text, end, encoding)
    return types.Range(types.Position(start_line, start_char), types.Position(end_line, end_char))


def new_item_id() -> str:
    return uuid.uuid4().hex[:16]


def inline_items(
    uri: str, query: CompletionQuery, suggestions: list[Suggestion], encoding: Encoding, item_ids: list[str]
) -> list[types.InlineCompletionItem]:
    return [
        types.InlineCompletionItem(
            insert_text=suggestion.insert_text,
            range=to_range(query.document_text, suggestion.start, suggestion.end, encoding),
            command=types.Command(
                title="dcomplete: accepted",
                command=ACCEPT_COMMAND,
                arguments=[{"uri": uri, "itemId": item_id}],
            ),
        )
        for suggestion, item_id in zip(suggestions, item_ids, strict=True)
    ]


def fallback_items(
    uri: str, query: CompletionQuery, suggestions: list[Suggestion], encoding: Encoding, item_ids: list[str]
) -> list[types.CompletionItem]:
    """`textDocument/completion` items for clients without inline completion: the label is the first
    line, the text edit inserts everything."""
    items = []
    for rank, (suggestion, item_id) in enumerate(zip(suggestions, item_ids, strict=True)):
        label = _one_line(suggestion.insert_text).strip() or suggestion.insert_text.strip()
        items.append(
            types.CompletionItem(
                label=label[:80],
                kind=types.CompletionItemKind.Text,
                detail="dcomplete",
                documentation=types.MarkupContent(
                    types.MarkupKind.Markdown, f"```\n{suggestion.insert_text}\n```"
                ),
                filter_text=suggestion.insert_text,
                sort_text=f"0{rank}",
                preselect=rank == 0,
                insert_text_format=types.InsertTextFormat.PlainText,
                text_edit=types.TextEdit(
                    to_range(query.document_text, suggestion.start, suggestion.end, encoding),
                    suggestion.insert_text,
                ),
                command=types.Command(
                    title="dcomplete: accepted",
                    command=ACCEPT_COMMAND,
                    arguments=[{"uri": uri, "itemId": item_id}],
                ),
            )
        )
    return items
