"""Feature registrations. Each handler delegates to `Session` / `CommandRunner` in one call.

Completion and command handlers are `async def`: pygls runs them as tasks, so `$/cancelRequest`
reaches them, and model work happens on the scheduler's worker thread, never on the event loop.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .actions import ACCEPTED, FILL_HOLES, REFACTOR_SELECTION, REGENERATE_SELECTION, code_actions
from .commands import CommandRunner
from .next_edit_flow import NextEditFlow
from .next_edits import ACCEPTED_INLINE_EDIT, DID_SHOW_INLINE_EDIT, INLINE_EDIT
from .protocol import DcompleteProtocol
from .session import Session
from .version import __version__

DOCUMENT_STATE = "dcomplete/documentState"

logger = logging.getLogger(__name__)


class DcompleteServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("dcomplete", __version__, protocol_cls=DcompleteProtocol)
        self.session = Session(self)
        self.commands = CommandRunner(self.session)
        self.next_edits = NextEditFlow(self.session)
        self.protocol.on_cancel = self.session.cancel_request  # type: ignore[attr-defined]
        self._reported_bad_input = False

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A notification or message the server could not handle (requests get error responses).

        Hostile or broken input can do this on every message, so the user is told once per session
        and the rest goes to the log."""
        logger.warning("could not handle a message: %s", error)
        if not self._reported_bad_input:
            self._reported_bad_input = True
            super().report_server_error(error, source)


def build_server() -> DcompleteServer:
    server = DcompleteServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: DcompleteServer, params: types.InitializeParams) -> None:
        ls.session.initialize(params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: DcompleteServer, params: types.InitializedParams) -> None:
        ls.session.initialized()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: DcompleteServer, params: None) -> None:
        ls.session.shutdown()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: DcompleteServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await ls.session.change_configuration(params)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DcompleteServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.session.did_open(params)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DcompleteServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.session.did_change(params)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DcompleteServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.session.did_close(params)

    # pygls advertises inlineCompletionProvider only when options are given.
    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: DcompleteServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList:
        return await ls.session.inline_completion(params)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(resolve_provider=False))
    async def completion(ls: DcompleteServer, params: types.CompletionParams) -> types.CompletionList:
        return await ls.session.completion(params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.RefactorRewrite], resolve_provider=False
        ),
    )
    def code_action(ls: DcompleteServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        document = ls.session.document(params.text_document.uri)
        return code_actions(
            document.uri, params.range, document.text, document.language, params.context.only
        )

    @server.feature(DOCUMENT_STATE)
    def document_state(ls: DcompleteServer, params: Any) -> dict[str, Any]:
        return ls.session.document_state(params)

    @server.command(REGENERATE_SELECTION)
    async def regenerate_selection(ls: DcompleteServer, *arguments: Any) -> Any:
        return await ls.commands.regenerate_selection(arguments)

    @server.command(FILL_HOLES)
    async def fill_holes(ls: DcompleteServer, *arguments: Any) -> Any:
        return await ls.commands.fill_holes(arguments)

    @server.command(REFACTOR_SELECTION)
    async def refactor_selection(ls: DcompleteServer, *arguments: Any) -> Any:
        return await ls.commands.refactor_selection(arguments)

    @server.command(ACCEPTED)
    def accepted(ls: DcompleteServer, *arguments: Any) -> None:
        ls.commands.accepted(arguments)

    @server.feature(INLINE_EDIT)
    async def inline_edit(ls: DcompleteServer, params: Any) -> dict[str, Any]:
        return await ls.next_edits.request(params)

    @server.feature(DID_SHOW_INLINE_EDIT)
    def did_show_inline_edit(ls: DcompleteServer, params: Any) -> None:
        ls.next_edits.shown(params)

    @server.command(ACCEPTED_INLINE_EDIT)
    def accepted_inline_edit(ls: DcompleteServer, *arguments: Any) -> None:
        ls.next_edits.accepted(arguments)

    return server
