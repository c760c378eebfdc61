"""A test hook that makes model work fail on purpose, so tests can watch the server survive it.

`DCOMPLETE_TEST_FAULT` is read here and nowhere else, once, when the server starts:

- `engine-error`: every model call raises RuntimeError (a bug or a broken kernel inside the engine);
- `engine-oom`: every model call raises MemoryError (a canvas too large for the machine);
- `slow-engine:MS`: every model call first sleeps MS milliseconds (a slow model under a burst of
  requests); a superseded request still runs to completion once started, as a real step would.

Unset (always, outside tests), `inject` does nothing.
"""

from __future__ import annotations

import os
import time

FAULT_ENV = "DCOMPLETE_TEST_FAULT"
_FAULT = os.environ.get(FAULT_ENV, "").strip()


def inject() -> None:
    """Called on the worker thread right before the engine runs."""
    if not _FAULT:
        return
    if _FAULT == "engine-error":
        raise RuntimeError(f"injected engine failure ({FAULT_ENV}={_FAULT})")
    if _FAULT == "engine-oom":
        raise MemoryError(f"injected out-of-memory ({FAULT_ENV}={_FAULT})")
    if _FAULT.startswith("slow-engine:"):
        time.sleep(int(_FAULT.split(":", 1)[1]) / 1000)
