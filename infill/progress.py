"""A one-line progress bar on stderr, only when stderr is a terminal: files done / total, tokens/s
(new tokens the engine wrote, over the wall time so far) and, once there are any, failed files."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, enabled: bool, width: int = 30) -> None:
        self.total, self.enabled, self.width = total, enabled and total > 0, width
        self.done = 0
        self.tokens = 0
        self.failed = 0
        self.started = time.monotonic()
        self._draw()

    def advance(self, count: int = 1, tokens: int = 0, failed: int = 0) -> None:
        self.done = min(self.total, self.done + count)
        self.tokens += tokens
        self.failed += failed
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        filled = self.width * self.done // self.total
        elapsed = time.monotonic() - self.started
        bar = "#" * filled + "-" * (self.width - filled)
        rate = self.tokens / elapsed if elapsed > 0 else 0.0
        failed = f", {self.failed} failed" if self.failed else ""
        sys.stderr.write(f"\r[{bar}] {self.done}/{self.total} files{failed} {rate:7.1f} tok/s {elapsed:5.1f}s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()
