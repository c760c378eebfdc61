"""`workspace/executeCommand` flows: run a multi-spot fill, then apply it with one `workspace/applyEdit`.

Long runs report `$/progress` (when the client supports work-done progress) and stop at the next
denoising step on `window/workDoneProgress/cancel` or `$/cancelRequest`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .actions import (
    ACCEPTED,
    FILL_HOLES,
    REFACTOR_SELECTION,
    REGENERATE_SELECTION,
    AcceptedArgs,
    BadCommandArguments,
    FillHolesArgs,
    RefactorArgs,
    RegenerateArgs,
    parse_arguments,
    selected_lines,
    workspace_edit,
)
from .inference import Outcome
from .scheduler import CancelCheck, Ticket

if TYPE_CHECKING:
    from .session import Session

PROGRESS_EVERY_S = 0.2


def _parse(command: str, arguments: tuple[object, ...], shape: type[Any]) -> Any:
    try:
        return parse_arguments(command, arguments, shape)
    except BadCommandArguments as error:
        raise JsonRpcInvalidParams(str(error)) from None


class CommandRunner:
    def __init__(self, session: Session) -> None:
        self.session = session

    @property
    def server(self) -> Any:
        return self.session.server

    def accepted(self, arguments: tuple[object, ...]) -> None:
        args: AcceptedArgs = _parse(ACCEPTED, arguments, AcceptedArgs)
        self.session.feedback.accept(args.uri, args.item_id)
        self.session.memory.accepted(args.uri, args.item_id)

    async def regenerate_selection(self, arguments: tuple[object, ...]) -> dict[str, Any] | None:
        args: RegenerateArgs = _parse(REGENERATE_SELECTION, arguments, RegenerateArgs)
        first, last = selected_lines(args.range)
        return await self._fill_and_apply(
            args.uri,
            "Regenerate selection",
            lambda backend, text, settings, language, cancel, context: backend.regenerate(
                text, first, last, settings, language, args.uri, cancel, context=context
            ),
        )

    async def fill_holes(self, arguments: tuple[object, ...]) -> dict[str, Any] | None:
        args: FillHolesArgs = _parse(FILL_HOLES, arguments, FillHolesArgs)
        return await self._fill_and_apply(
            args.uri,
            "Fill holes",
            lambda backend, text, settings, language, cancel, context: backend.fill_holes(
                text, settings, language, args.uri, cancel, context
            ),
        )

    async def refactor_selection(self, arguments: tuple[object, ...]) -> dict[str, Any] | None:
        args: RefactorArgs = _parse(REFACTOR_SELECTION, arguments, RefactorArgs)
        if not args.instruction.strip():
            raise JsonRpcInvalidParams(
                f"{REFACTOR_SELECTION} needs an `instruction` (the editor plugin asks the user for it)"
            )
        first, last = selected_lines(args.range)
        return await self._fill_and_apply(
            args.uri,
            "Refactor selection",
            lambda backend, text, settings, language, cancel, context: backend.regenerate(
                text, first, last, settings, language, args.uri, cancel, args.instruction, context
            ),
        )

    async def _fill_and_apply(
        self, uri: str, title: str, fill: Callable[..., Outcome]
    ) -> dict[str, Any] | None:
        """Run `fill` on a snapshot of the document, with the project's context, and apply every spot in one
        edit.

        Returns {"applied": bool, "spots": n}, or None when cancelled or nothing was generated."""
        session = self.session
        document = session.document(uri)
        text, version, language = document.text, document.version, document.language
        settings = session.settings
        context = session.context.source(settings, uri, text, language)
        progress = await _Progress.start(self.server, title)

        def work(cancel: CancelCheck) -> Outcome:
            return fill(session.backend, text, settings, language, progress.counting(cancel), context)

        try:
            outcome = await session.run_job(f"{uri}#command", work, on_ticket=progress.attach)
        except ValueError as error:  # a line range outside the file, an unsupported language
            raise JsonRpcInvalidParams(f"{title}: {error}") from None
        finally:
            progress.end()
        if outcome is None or outcome.cancelled:
            return None
        if document.version != version or uri not in session.documents or session.documents.get(uri) is not document:
            self._tell(
                types.MessageType.Warning, f"{title}: {uri} changed while the model ran; nothing applied"
            )
            return None
        if not outcome.replacements:
            why = "; ".join(outcome.notes) or "the model had nothing to add"
            self._tell(types.MessageType.Info, f"{title}: nothing applied to {uri} ({why})")
            return {"applied": False, "spots": 0}
        edit = workspace_edit(
            uri,
            version,
            text,
            outcome.replacements,
            session.documents.encoding,
            versioned=_supports_document_changes(self.server),
        )
        result = await self.server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=f"dcomplete: {title}")
        )
        return {"applied": bool(result and result.applied), "spots": len(outcome.replacements)}

    def _tell(self, kind: types.MessageType, message: str) -> None:
        self.server.window_show_message(types.ShowMessageParams(kind, message))


def _supports_document_changes(server: Any) -> bool:
    workspace = server.client_capabilities.workspace
    return bool(workspace and workspace.workspace_edit and workspace.workspace_edit.document_changes)


class _Progress:
    """Server-initiated work-done progress, or nothing when the client does not support it.

    The worker calls `counting(cancel)` once per denoising step; reports are posted back to the loop
    at most every PROGRESS_EVERY_S."""

    def __init__(self, server: Any, token: str | None) -> None:
        self.server = server
        self.token = token
        self.loop = asyncio.get_running_loop()
        self.steps = 0
        self._last_report = 0.0

    @classmethod
    async def start(cls, server: Any, title: str) -> _Progress:
        window = server.client_capabilities.window
        if not (window and window.work_done_progress):
            return cls(server, None)
        token = f"dcomplete-{uuid.uuid4().hex[:12]}"
        await server.work_done_progress.create_async(token)
        server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=f"dcomplete: {title}", cancellable=True, message="waiting for the model"
            ),
        )
        return cls(server, token)

    def attach(self, ticket: Ticket) -> None:
        """Cancel the job when the user cancels the progress in the editor."""
        if self.token is None:
            return
        cancelled = self.server.work_done_progress.tokens.get(self.token)
        if cancelled is not None:
            cancelled.add_done_callback(lambda future: ticket.stop() if future.cancelled() else None)

    def counting(self, cancel: CancelCheck) -> CancelCheck:
        def polled() -> bool:
            self.steps += 1
            now = time.monotonic()
            if self.token is not None and now - self._last_report >= PROGRESS_EVERY_S:
                self._last_report = now
                self.loop.call_soon_threadsafe(self._report, self.steps)
            return cancel()

        return polled

    def _report(self, steps: int) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=f"denoising step {steps}")
            )

    def end(self) -> None:
        if self.token is not None:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="done"))
            self.server.work_done_progress.tokens.pop(self.token, None)
            self.token = None
