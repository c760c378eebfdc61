"""Local accept/reject log of offered completions, shared by the language server and the engine server's
Tabby events. Nothing leaves the machine.

An item is *accepted* when the client runs its `dcomplete.accepted` command (Tabby: a `select` event), and
*rejected* when a newer completion is offered for the same document while it was still pending (Tabby: a
`dismiss` event); offering the same item again, as typing through it does, rejects nothing. Events are appended as
JSON lines to `$XDG_STATE_HOME/dcomplete/feedback.jsonl` (default `~/.local/state/dcomplete/`).
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

logger = logging.getLogger(__name__)


def default_log_path() -> Path:
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "dcomplete" / "feedback.jsonl"


class FeedbackLog:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_log_path()
        self.accepted = 0
        self.rejected = 0
        self._pending: dict[str, set[str]] = {}
        self._broken = False

    def offered(self, uri: str, item_ids: list[str]) -> None:
        """Items for `uri`; whatever was still pending there and is not offered again counts as rejected
        (an item offered again is one the user is typing through: still the same suggestion)."""
        for item_id in sorted(self._pending.pop(uri, set()) - set(item_ids)):
            self.rejected += 1
            self._write({"event": "rejected", "uri": uri, "itemId": item_id})
        if item_ids:
            self._pending[uri] = set(item_ids)

    def accept(self, uri: str, item_id: str) -> None:
        self._pending.get(uri, set()).discard(item_id)
        self.accepted += 1
        self._write({"event": "accepted", "uri": uri, "itemId": item_id})

    def reject(self, uri: str, item_id: str) -> None:
        self._pending.get(uri, set()).discard(item_id)
        self.rejected += 1
        self._write({"event": "rejected", "uri": uri, "itemId": item_id})

    def _write(self, event: dict[str, object]) -> None:
        if self._broken:
            return
        record = {
            "time": round(time.time(), 3),
            **event,
            "accepted": self.accepted,
            "rejected": self.rejected,
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as log:
                log.write(json.dumps(record) + "\n")
        except OSError as error:
            self._broken = True
            logger.warning(
                "feedback log %s is not writable (%s); accept/reject counts stay in memory", self.path, error
            )
