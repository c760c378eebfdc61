"""pygls' LanguageServerProtocol with three changes the server relies on.

1. A request whose params do not match the LSP types gets an InvalidParams *response* naming the bad
   field. (pygls 2.1 only logs it, so the client waits forever for an answer.)
2. UTF-8 positions are chosen whenever the client offers them (pygls takes the client's first choice);
   byte columns are what tree-sitter and Neovim use natively.
3. `$/cancelRequest` also reaches `on_cancel`, so jobs behind a command (whose pygls future is not
   the task doing the work) stop as well.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

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
            return super().structure_message(data)
        except JsonRpcException as error:
            if "id" not in data or "method" not in data:
                raise
            message = f"{data['method']}: invalid params: {_describe(error)}"
            logger.warning("rejected request %s: %s", data["id"], message)
            self._send_response(data["id"], error=JsonRpcInvalidParams(message).to_response_error())
            return RejectedMessage()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, RejectedMessage):
            return
        super().handle_message(message)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if self.on_cancel is not None:
            self.on_cancel(msg_id)
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        general = params.capabilities.general
        offered = list(general.position_encodings or []) if general is not None else []
        if general is not None and types.PositionEncodingKind.Utf8 in offered:
            offered.remove(types.PositionEncodingKind.Utf8)
            general.position_encodings = [types.PositionEncodingKind.Utf8, *offered]
        return (yield from super().lsp_initialize(params))
