"""The user's recent edits across open documents: bursts of typing coalesced into one edit each.

A burst is the run of changes to one document that follow each other without a pause and stay near each
other: a pause (`pause_s`), a change more than `jump_lines` lines from the burst, or a change in another
document ends it, and the burst becomes one `DocEdit` (the document's text when the burst began against its
text when it ended). The ring keeps the newest `limit` edits of every document; the open burst counts as the
newest edit. Nothing here reads the clock: callers pass `now` (the language server passes the event loop's
monotonic time), so tests replay exact timings.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

from infill.next_edit.edits import DocEdit, changed_region, edit_between

PAUSE_S = 1.5  # minuet's and Zeta's burst boundary (research/next-edit.md, 1.5)
JUMP_LINES = 2
LIMIT = 16


@dataclass
class _Burst:
    uri: str
    base: str  # the document's text when the burst began
    text: str  # its text after the burst's last change
    first: int  # 0-based lines the burst's changes span, in `text`
    last: int
    at: float  # when the last change came
    accepted: bool = False


class EditHistory:
    def __init__(self, limit: int = LIMIT, pause_s: float = PAUSE_S, jump_lines: int = JUMP_LINES) -> None:
        self.pause_s, self.jump_lines = pause_s, jump_lines
        self._closed: deque[DocEdit] = deque(maxlen=limit)
        self._burst: _Burst | None = None

    def changed(self, uri: str, before: str, after: str, now: float, accepted: bool = False) -> None:
        """Document `uri` went from `before` to `after` (one notification's changes, applied) at `now`;
        `accepted`: the change applied a suggestion (it is a burst of its own)."""
        if before == after:
            return
        start, _, new_end = changed_region(before, after)
        first = after.count("\n", 0, start)
        last = first + after.count("\n", start, new_end)
        burst = self._burst
        if (burst is not None and not accepted and not burst.accepted and burst.uri == uri and burst.text == before
                and now - burst.at <= self.pause_s and burst.first - self.jump_lines <= last
                and first <= burst.last + self.jump_lines):
            shift = after.count("\n") - before.count("\n")
            burst.text, burst.at = after, now
            burst.first, burst.last = min(burst.first, first), max(burst.last + (shift if burst.last >= first else 0), last)
            return
        self._close()
        self._burst = _Burst(uri, before, after, first, last, now, accepted)
        if accepted:
            self._close()

    def idle(self, now: float) -> None:
        """Close the open burst if it has paused since its last change."""
        if self._burst is not None and now - self._burst.at > self.pause_s:
            self._close()

    def forget(self, uri: str) -> None:
        """Drop a closed document's edits."""
        if self._burst is not None and self._burst.uri == uri:
            self._burst = None
        kept = [e for e in self._closed if e.uri != uri]
        self._closed.clear()
        self._closed.extend(kept)

    def edits(self, uri: str | None = None) -> list[DocEdit]:
        """The edits, oldest first, the open burst last; only `uri`'s when given."""
        out = list(self._closed)
        burst = self._burst
        if burst is not None:
            edit = edit_between(burst.uri, burst.base, burst.text, burst.at, burst.accepted)
            if edit is not None:
                out.append(edit)
        return [e for e in out if uri is None or e.uri == uri]

    def mark_accepted(self, uri: str) -> None:
        """The newest edit of `uri` applied a suggestion: marked so (the header says so), and closed."""
        burst = self._burst
        if burst is not None and burst.uri == uri:
            burst.accepted = True
            self._close()
            return
        for i in range(len(self._closed) - 1, -1, -1):
            if self._closed[i].uri == uri:
                self._closed[i] = replace(self._closed[i], accepted=True)
                return

    def last(self, uri: str | None = None) -> DocEdit | None:
        found = self.edits(uri)
        return found[-1] if found else None

    def _close(self) -> None:
        burst, self._burst = self._burst, None
        if burst is not None:
            edit = edit_between(burst.uri, burst.base, burst.text, burst.at, burst.accepted)
            if edit is not None:
                self._closed.append(edit)
