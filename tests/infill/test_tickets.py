"""The one supersede/cancel mechanism the language server and the engine server share."""

from __future__ import annotations

import time

import pytest

from infill.tickets import Supersede, Ticket


def test_a_newer_claim_supersedes_and_the_first_reason_stays() -> None:
    registry = Supersede()
    old, new, other = Ticket("a"), Ticket("a"), Ticket(None)
    registry.claim(old)
    registry.claim(other)
    registry.claim(new)
    assert old() and old.reason == "supersede" and not new() and not other()
    old.stop("disconnect")
    assert old.reason == "supersede"
    registry.release(old)  # the key is new's now
    registry.stop_all()
    assert new.reason == "cancel" and not other()
    expiring = Ticket()
    expiring.expire_after(1)
    with pytest.raises(ValueError, match="deadline_ms 0"):
        Ticket().expire_after(0)
    time.sleep(0.01)
    assert expiring() and expiring.reason == "deadline"
