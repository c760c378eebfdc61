"""What the client sees when model work fails inside a request.

The request gets a JSON-RPC error naming the failure; the server stays up and says so once in a
`dcomplete/status` notification (field `error`), not once per request: a broken engine fails every
keystroke, and the editor's status line needs the news, not a flood. The next success clears it, so
the same failure later is news again. Out-of-memory gets its own sentence, since the fix is a smaller
`maxTokens` or another device rather than a bug report.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pygls.exceptions import JsonRpcInternalError

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
    def __init__(self, notify_status: Callable[[str | None], None]) -> None:
        self._notify_status = notify_status
        self.current: str | None = None
        self.failures = 0

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
