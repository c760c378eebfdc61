"""Next edits over LSP: the user's edit history, and `textDocument/copilotInlineEdit` answered from it.

The request and result shapes are those of GitHub's Copilot language server (research/next-edit.md, 1.3), so
Neovim plugins built for it (copilot-lsp, copilot.lua, sidekick.nvim) work unchanged:

    request  {textDocument: {uri, version}, position, context?: {triggerKind}}
    result   {edits: [{text, textDocument: {uri, version}, range, command: {title, command, arguments: [id]}}]}

`edits` are alternatives, not a sequence: the best next edit comes first (one, today). After applying one, a
client runs its `command` (`workspace/executeCommand`), which marks the change it made as an accepted
suggestion in the history; `textDocument/didShowInlineEdit` {item: {command: {arguments: [id]}}} says it was
shown. An edit never touches the lines of the user's last edit (the text being typed, even while its burst
is open) and never undoes it (`infill.next_edit`); when to ask is the client's (after a pause in typing, as
the editors here do), or the server waits `nextEdit.debounceMs` for a newer request.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from infill.next_edit.edits import DocEdit
from infill.next_edit.history import EditHistory
from infill.next_edit.suggest import NextEdit
from infill.positions import LineIndex

from .positions import Encoding

INLINE_EDIT = "textDocument/copilotInlineEdit"
DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit"
ACCEPTED_INLINE_EDIT = "dcomplete.acceptedInlineEdit"
OFFERED_KEPT = 64  # offered edits remembered for their accept command


class BadParams(ValueError):
    """A request or notification whose params are not of the method's shape; the message names the field."""


def _get(obj: Any, name: str) -> Any:
    """A field of params as pygls hands them over for a method it has no types for (an object or a dict)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


@dataclass(frozen=True)
class InlineEditRequest:
    uri: str
    version: int | None
    line: int
    character: int


def parse_request(params: Any) -> InlineEditRequest:
    document, position = _get(params, "textDocument"), _get(params, "position")
    uri = _get(document, "uri")
    if not isinstance(uri, str):
        raise BadParams(f"{INLINE_EDIT}: params need textDocument.uri (a string)")
    version = _get(document, "version")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
        raise BadParams(f"{INLINE_EDIT}: textDocument.version must be an integer")
    line, character = _get(position, "line"), _get(position, "character")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (line, character)):
        raise BadParams(f"{INLINE_EDIT}: params need position.line and position.character (integers >= 0)")
    return InlineEditRequest(uri, version, line, character)


def shown_id(params: Any) -> str | None:
    """The item id a `didShowInlineEdit` names, or None for params of another shape."""
    arguments = _get(_get(_get(params, "item"), "command"), "arguments")
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], str):
        return arguments[0]
    return None


class NextEditMemory:
    """The workspace's edit history, and the edits offered lately (by item id) until accepted or forgotten."""

    def __init__(self) -> None:
        self.history = EditHistory()
        self.offered: OrderedDict[str, NextEdit] = OrderedDict()
        self.shown = 0
        self.accepted = 0

    def offer(self, edit: NextEdit) -> str:
        item_id = uuid.uuid4().hex
        self.offered[item_id] = edit
        while len(self.offered) > OFFERED_KEPT:
            self.offered.popitem(last=False)
        return item_id

    def accept(self, item_id: str) -> NextEdit | None:
        """The offered edit `item_id`, now accepted: the history's newest edit of its document, which applied
        it, counts as an accepted suggestion."""
        edit = self.offered.pop(item_id, None)
        if edit is not None:
            self.accepted += 1
            self.history.mark_accepted(edit.uri)
        return edit

    def forget(self, uri: str) -> None:
        self.history.forget(uri)
        for item_id in [k for k, v in self.offered.items() if v.uri == uri]:
            del self.offered[item_id]


def result_item(edit: NextEdit, text: str, version: int, encoding: Encoding, item_id: str) -> dict[str, Any]:
    """One entry of the result's `edits`, positions in the negotiated encoding."""
    index = LineIndex(text)
    (sl, sc), (el, ec) = index.to_lsp(edit.start, encoding), index.to_lsp(edit.end, encoding)
    return {
        "text": edit.new_text,
        "textDocument": {"uri": edit.uri, "version": version},
        "range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
        "command": {"title": "Accept next edit", "command": ACCEPTED_INLINE_EDIT, "arguments": [item_id]},
    }


def no_edits() -> dict[str, Any]:
    return {"edits": []}


def capability() -> dict[str, Any]:
    """What the server advertises under `experimental` (clients of the Copilot server probe the method)."""
    return {"copilotInlineEdit": True, "nextEditCommand": ACCEPTED_INLINE_EDIT}


def history_of(memory: NextEditMemory, uri: str) -> list[DocEdit]:
    """The history a request for `uri` reads: every document's edits (the header shows them all), with one of
    `uri`'s last (the edit whose next edit is asked for)."""
    edits = memory.history.edits()
    return edits if any(e.uri == uri for e in edits) else []

