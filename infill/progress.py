"""A one-line progress bar on stderr, only when stderr is a terminal."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, enabled: bool, width: int = 30) -> None:
        self.total, self.enabled, self.width = total, enabled and total > 0, width
        self.done = 0
        self.started = time.monotonic()
        self._draw()

    def advance(self, count: int = 1) -> None:
        self.done = min(self.total, self.done + count)
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        filled = self.width * self.done // self.total
        elapsed = time.monotonic() - self.started
        bar = "#" * filled + "-" * (self.width - filled)
        sys.stderr.write(f"\r[{bar}] {self.done}/{self.total} files {elapsed:5.1f}s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()
