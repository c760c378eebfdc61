"""A test hook that makes model work fail on purpose, so tests can watch the server survive it.

`DCOMPLETE_TEST_FAULT` is read here and nowhere else, once, when the server starts:

- `engine-error`: every model call raises RuntimeError (a bug or a broken kernel inside the engine);
- `engine-oom`: every model call raises MemoryError (a canvas too large for the machine);
- `slow-engine:MS`: every model call first sleeps MS milliseconds (a slow model under a burst of
  requests); a superseded request still runs to completion once started, as a real step would.

A model call is one `infill` call of the engine. The hook wraps the engine when it is opened (`wrap`), so
it costs nothing on the way of a fill; unset (always, outside tests), `wrap` hands the engine back as it is.
"""

from __future__ import annotations

import os
import time
from typing import Any

FAULT_ENV = "DCOMPLETE_TEST_FAULT"
_FAULT = os.environ.get(FAULT_ENV, "").strip()


def inject() -> None:
    """What the configured fault does before a model call."""
    if _FAULT == "engine-error":
        raise RuntimeError(f"injected engine failure ({FAULT_ENV}={_FAULT})")
    if _FAULT == "engine-oom":
        raise MemoryError(f"injected out-of-memory ({FAULT_ENV}={_FAULT})")
    if _FAULT.startswith("slow-engine:"):
        time.sleep(int(_FAULT.split(":", 1)[1]) / 1000)


class FaultyEngine:
    """`engine`, except that each `infill` call meets the configured fault first."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def infill(self, *args: Any, **kwargs: Any) -> Any:
        inject()
        return self._engine.infill(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


def wrap(engine: Any) -> Any:
    """The engine as it is, or (with `DCOMPLETE_TEST_FAULT` set) wrapped in the fault."""
    return FaultyEngine(engine) if _FAULT else engine
