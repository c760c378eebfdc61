"""pygls' LanguageServerProtocol with the changes the server relies on.

1. A request whose params do not match the LSP types gets an InvalidParams *response* naming the bad
   field. (pygls 2.1 only logs it, so the client waits forever for an answer.)
2. UTF-8 positions are chosen whenever the client offers them (pygls takes the client's first choice);
   byte columns are what tree-sitter and Neovim use natively.
3. `$/cancelRequest` also reaches `on_cancel`, so jobs behind a command (whose pygls future is not
   the task doing the work) stop as well.
4. Documents live only in our `DocumentStore`: pygls' own copy is not kept. Its didChange handler ran
   first and clamped a character past a line's end by writing into the client's params (to one short
   of the end), so our store applied a different edit than the client made; it also kept a second copy
   of every document and stopped at input it could not encode (lone surrogates) before our handler ran.
5. Every message that carries an `id` and a `method` gets exactly one answer, including those pygls
   would drop in silence: requests inside a JSON-RPC batch array (LSP has no batches), requests without
   `"jsonrpc": "2.0"`, and notification methods sent with an id. Each gets an InvalidRequest error.
   (Framing errors on the wire are handled before this, in wire.py.)
6. The initialize result announces the languageIds the server completes by default (every row of infill's
   language table, under the names VS Code and Neovim use): `capabilities.experimental.dcomplete.languages`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from infill.languages import editor_language_ids

from . import next_edits

logger = logging.getLogger(__name__)


class RejectedMessage:
    """Stands in for a message already answered with an error; `handle_message` drops it."""

    jsonrpc = "rejected"


def _describe(error: BaseException) -> str:
    cause = error.__cause__
    if isinstance(cause, cattrs.ClassValidationError):
        return "; ".join(cattrs.transform_error(cause, path="$")[:3])
    return str(cause or error)


class DcompleteProtocol(LanguageServerProtocol):
    on_cancel: Callable[[Any], None] | None = None

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            message = super().structure_message(data)
        except JsonRpcException as error:
            if "id" not in data or "method" not in data:
                raise
            message = f"{data['method']}: invalid params: {_describe(error)}"
            logger.warning("rejected request %s: %s", data["id"], message)
            self._send_response(data["id"], error=JsonRpcInvalidParams(message).to_response_error())
            return RejectedMessage()
        if "id" in data and "method" in data and "jsonrpc" in data and not hasattr(message, "id"):
            self._refuse(data, f"{data['method']} is a notification; a notification takes no id")
            return RejectedMessage()
        return message

    def handle_message(self, message: Any) -> None:
        if isinstance(message, RejectedMessage):
            return
        if isinstance(message, list):
            for item in message:
                self._refuse(item, "batch arrays are not part of LSP; send each message on its own")
            return
        if getattr(message, "jsonrpc", None) != self.VERSION:
            self._refuse(message, 'not a JSON-RPC 2.0 message (it needs "jsonrpc": "2.0")')
            return
        super().handle_message(message)

    def _refuse(self, message: Any, reason: str) -> None:
        """Answer a message that will not run with InvalidRequest when it is a request; log the rest."""
        fields = message if isinstance(message, dict) else vars(message) if hasattr(message, "__dict__") else {}
        if not fields and hasattr(type(message), "__attrs_attrs__"):
            fields = {a.name: getattr(message, a.name) for a in type(message).__attrs_attrs__}
        msg_id = fields.get("id")
        logger.warning("refused message (id %r): %s", msg_id, reason)
        if "method" in fields and isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool):
            self._send_response(msg_id, error=JsonRpcInvalidRequest(reason).to_response_error())

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if self.on_cancel is not None:
            self.on_cancel(msg_id)
        super()._handle_cancel_notification(msg_id)

    def _user_handler(self, method: str, params: Any) -> Any:
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        general = params.capabilities.general
        offered = list(general.position_encodings or []) if general is not None else []
        if general is not None and types.PositionEncodingKind.Utf8 in offered:
            offered.remove(types.PositionEncodingKind.Utf8)
            general.position_encodings = [types.PositionEncodingKind.Utf8, *offered]
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"dcomplete": {"languages": editor_language_ids()},
                                            "nextEdits": next_edits.capability()}
        return result

