"""Why a request should stop before it is done, for every front door: a `Ticket` is the request's cancel
callable (what `fill`, `fill_many` and the engine poll before every step of the request's rows), and a
`Supersede` registry stops the request that held a key when a newer one claims it.

The language server keys requests by document (a keystroke supersedes the completion still running for
the one before) and stops them on `$/cancelRequest`; the engine server keys them by the
`X-Dcomplete-Supersede` header and stops them when the client disconnects or the deadline passes. Both
share this one mechanism; it lives in infill because that is the layer every front door imports.
"""

from __future__ import annotations

import threading
import time


class Ticket:
    """The stop state of one request: `reason` is None while it may run, then the first reason given
    ("cancel", "supersede", "disconnect", "deadline"). `key` is what a newer request supersedes it by."""

    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self.reason: str | None = None
        self._until: float | None = None

    def stop(self, reason: str = "cancel") -> None:
        if self.reason is None:
            self.reason = reason

    def expire_after(self, ms: int | None) -> None:
        """Stop `ms` milliseconds from now (None: never)."""
        if ms is not None:
            if ms < 1:
                raise ValueError(f"deadline_ms {ms}: must be at least 1")
            self._until = time.monotonic() + ms / 1000

    def __call__(self) -> bool:
        """True once the request should stop; safe to poll from any thread."""
        if self._until is not None and self.reason is None and time.monotonic() > self._until:
            self.stop("deadline")
        return self.reason is not None


class Supersede:
    """The latest request per key; claiming a key stops the request that held it."""

    def __init__(self) -> None:
        self._latest: dict[str, Ticket] = {}
        self._lock = threading.Lock()

    def claim(self, ticket: Ticket) -> None:
        """Make `ticket` the latest of its key (nothing for a ticket without one)."""
        if ticket.key is None:
            return
        with self._lock:
            old = self._latest.get(ticket.key)
            self._latest[ticket.key] = ticket
        if old is not None:
            old.stop("supersede")

    def release(self, ticket: Ticket) -> None:
        """`ticket` is done: its key is free unless a newer request holds it."""
        if ticket.key is None:
            return
        with self._lock:
            if self._latest.get(ticket.key) is ticket:
                del self._latest[ticket.key]

    def stop_all(self, reason: str = "cancel") -> None:
        with self._lock:
            held = list(self._latest.values())
        for ticket in held:
            ticket.stop(reason)
