"""The next-edit request flow: from `textDocument/copilotInlineEdit` to the model and back (`next_edits` has
the protocol's shapes and the edit history)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from .next_edits import (
    ACCEPTED_INLINE_EDIT,
    BadParams,
    history_of,
    no_edits,
    parse_request,
    result_item,
    shown_id,
)

if TYPE_CHECKING:
    from infill.next_edit.suggest import NextEdit

    from .session import Session


class NextEditFlow:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.memory = session.next_edits

    async def request(self, params: Any) -> dict[str, Any]:
        session = self.session
        try:
            request = parse_request(params)
        except BadParams as error:
            raise JsonRpcInvalidParams(str(error)) from None
        document = session.document(request.uri)
        settings = session.settings
        if not settings.next_edit.enabled or document.language_id not in settings.languages:
            return no_edits()
        if request.version is not None and request.version != document.version:
            return no_edits()  # the client's copy is newer or older: an answer would land in the wrong text
        history = history_of(self.memory, request.uri)
        if not history:
            return no_edits()
        version, text = document.version, document.text
        others = [d for d in session.documents.all() if d.uri != request.uri]
        context = session.context.source(settings, request.uri, text, document.language)

        def work(cancel: Any) -> list[NextEdit]:
            return session.backend.next_edits(document, others, history, settings, cancel, context)

        shown = await session.run_job(f"next-edit:{request.uri}", work, settings.next_edit.debounce_ms / 1000)
        if shown is None or document.version != version or document.text != text:
            return no_edits()
        for edit in shown:
            target = session.documents.get(edit.uri) if edit.uri in session.documents else None
            if target is None:
                continue
            item_id = self.memory.offer(edit)
            return {"edits": [result_item(edit, target.text, target.version, session.documents.encoding, item_id)]}
        return no_edits()

    def shown(self, params: Any) -> None:
        item_id = shown_id(params)
        if item_id is not None and item_id in self.memory.offered:
            self.memory.shown += 1
            edit = self.memory.offered[item_id]
            self.session.feedback.offered(edit.uri, [item_id])

    def accepted(self, arguments: tuple[object, ...]) -> None:
        if len(arguments) != 1 or not isinstance(arguments[0], str):
            raise JsonRpcInvalidParams(f"{ACCEPTED_INLINE_EDIT} takes the item id (a string), "
                                       f"got {len(arguments)} arguments")
        edit = self.memory.accept(arguments[0])
        if edit is not None:
            self.session.feedback.accept(edit.uri, arguments[0])
