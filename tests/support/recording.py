"""An engine that keeps every request it was given (for tests that inspect what infill sent)."""

from __future__ import annotations

from typing import Any


class Recording:
    """The real engine, with every request it was given kept for inspection."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls: list[list[Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def infill(self, requests: Any, params: Any = None, cancel: Any = None) -> Any:
        self.calls.append(list(requests))
        return self.engine.infill(requests, params, cancel=cancel)
