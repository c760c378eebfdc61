"""Why a request should stop before it is done: its client went away, a newer request took its
`X-Dcomplete-Supersede` key, or its deadline passed. A `Ticket` is the request's cancel callable, polled
by the engine before every step of the request's rows."""

from __future__ import annotations

import threading
import time

SUPERSEDE_HEADER = "x-dcomplete-supersede"


class Ticket:
    def __init__(self) -> None:
        self.reason: str | None = None  # "disconnect", "supersede" or "deadline" once stopped
        self._until: float | None = None

    def stop(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def expire_after(self, ms: int | None) -> None:
        """Stop `ms` milliseconds from now (None: never)."""
        if ms is not None:
            if ms < 1:
                raise ValueError(f"deadline_ms {ms}: must be at least 1")
            self._until = time.monotonic() + ms / 1000

    def __call__(self) -> bool:
        if self._until is not None and self.reason is None and time.monotonic() > self._until:
            self.stop("deadline")
        return self.reason is not None


class Supersede:
    """The latest request per supersede key; claiming a key stops the request that held it."""

    def __init__(self) -> None:
        self._latest: dict[str, Ticket] = {}
        self._lock = threading.Lock()

    def claim(self, key: str, ticket: Ticket) -> None:
        with self._lock:
            old = self._latest.get(key)
            self._latest[key] = ticket
        if old is not None:
            old.stop("supersede")

    def release(self, key: str, ticket: Ticket) -> None:
        with self._lock:
            if self._latest.get(key) is ticket:
                del self._latest[key]
