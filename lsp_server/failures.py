"""What the client hears when the model fails: one reporter for both ways it can fail.

- Model work raises inside a request (`failed`): the request gets a JSON-RPC error naming the failure;
  the server stays up and says so once in a `dcomplete/status` notification (field `error`), not once per
  request: a broken engine fails every keystroke, and the editor's status line needs the news, not a flood.
  The next success (`succeeded`) clears it, so the same failure later is news again. Out-of-memory gets its
  own sentence, since the fix is a smaller `maxTokens` or another device rather than a bug report.
- The engine cannot be opened (`unavailable`): a model that does not load, or an engine server that cannot
  be reached. Requests answer empty; a `window/showMessage` error says so once per failure, and an engine
  server that stays down is one failure, whatever each new try says. When it answers again
  (`reachable_again`) one message says so; a model that loads (`loaded`) makes a later failure news again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError

if TYPE_CHECKING:
    from .inference import LoadFailure

logger = logging.getLogger(__name__)


def _is_out_of_memory(error: BaseException) -> bool:
    return isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError"


def describe(error: BaseException) -> str:
    """One line for the user."""
    detail = str(error).splitlines()[0] if str(error) else type(error).__name__
    if _is_out_of_memory(error):
        return f"the model ran out of memory ({detail}); lower `dcomplete.maxTokens` or use another device"
    return f"the model failed ({type(error).__name__}: {detail})"


class FailureReporter:
    """`show_message(kind, text)` sends `window/showMessage`; `notify_status(error)` sends the status
    notification, with `error` only when it reports a failure of model work."""

    def __init__(
        self,
        show_message: Callable[[types.MessageType, str], None],
        notify_status: Callable[[str | None], None],
    ) -> None:
        self._show_message = show_message
        self._notify_status = notify_status
        self.current: str | None = None
        """The failure of model work the client was last told of (None: the last work succeeded)."""
        self.failures = 0
        self.shown: LoadFailure | None = None
        """The engine failure the client was last told of (None: none, or it has recovered)."""

    # -- model work inside a request ----------------------------------------------------------------

    def failed(self, error: BaseException) -> JsonRpcInternalError:
        """Log the failure, tell the client once, and return the error the request answers with."""
        message = describe(error)
        self.failures += 1
        logger.error("model work failed: %s", message, exc_info=error)
        if message != self.current:
            self.current = message
            self._notify_status(message)
        return JsonRpcInternalError(f"dcomplete: {message}")

    def succeeded(self) -> None:
        self.current = None

    # -- opening the engine -------------------------------------------------------------------------

    def loaded(self) -> None:
        self.shown = None  # a later failure, even of the same spec, is news again
        self._notify_status(None)

    def unavailable(self, failure: LoadFailure) -> None:
        """Once per failure; an engine server that stays down is one failure, whatever each try says."""
        shown = self.shown
        same_server = failure.remote and shown is not None and shown.remote and shown.spec == failure.spec
        if failure == shown or same_server:
            return
        self.shown = failure
        if failure.remote:
            message = (
                f"dcomplete: {failure.message}; completions stay empty until it answers again "
                "(it is tried again at the next request)"
            )
        else:
            message = (
                f"dcomplete could not load the model `{failure.spec}` ({failure.message}); "
                "completions stay empty until the `dcomplete.model` setting changes"
            )
        self._show_message(types.MessageType.Error, message)
        self._notify_status(None)

    def reachable_again(self, loaded: bool) -> None:
        """The engine server answers again (`loaded`) after a failure was shown: say so once."""
        shown = self.shown
        if shown is None or not shown.remote or not loaded:
            return
        self.shown = None
        self._show_message(types.MessageType.Info, f"dcomplete: the engine at {shown.spec} answers again")
        self._notify_status(None)
