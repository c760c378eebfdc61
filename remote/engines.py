"""Which engine a front door talks to, decided in one place: the `dcomplete engine` server at a URL, or a
model loaded in this process. The language server (`engineUrl`, `model`, `device`), the CLI (`--engine-url`,
`--model`, `--device`, which `dcomplete engine` also loads with) and the Ray actors open theirs here.

Both kinds answer `engine.api.EngineLike` plus what the front doors show or manage: `name`, `family`,
`device`, `forget(doc_id)`. Importing this module loads neither (the language server imports it at start-up).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine import Engine
    from remote.client import RemoteEngine


def open_engine(
    model: str = "default", device: str | None = None, url: str | None = None, api_key: str | None = None,
    keep_documents: bool = False, serving: bool = False,
) -> Engine | RemoteEngine:
    """The engine server at `url` (with bearer token `api_key`) when a URL is given, else `model` (a folder,
    a Hugging Face repo id in the local cache, or "default") loaded on `device` (None: cuda when present).

    Raises what opening raises: `remote.client.EngineUnavailable` for a server that cannot be reached or
    answers wrongly, `engine.ModelLoadError` for a checkpoint that does not load, and torch's errors for a
    device; each caller words them for its own user. `keep_documents`: `Engine.load`'s (a local engine).
    `serving`: the caller is a process that serves from this engine until it exits (`settled_heap`)."""
    with settled_heap(serving):
        if url:
            from remote.client import RemoteEngine

            return RemoteEngine(url, api_key or None)
        from engine import Engine

        return Engine.load(spec=model, device=device, keep_documents=keep_documents)


@contextlib.contextmanager
def settled_heap(serving: bool) -> Iterator[None]:
    """Import and load with Python's cyclic collector paused, then freeze what they built (`gc.freeze`).

    torch's modules and a model leave some 220,000 objects that live as long as the process. While they
    are built the collector walks the whole heap each time it grows by a quarter, and afterwards every full
    collection walks them all: 85 ms each in a loaded language server, one of which fell in its first
    request (measured on the Zen 4 EPYC: import and load 2.33 s paused against 2.58 s). A frozen object is
    left out of every later collection, so a frozen object in a reference cycle is never freed: a traceback
    left by an import during the load holds the frames that called it, and so the engine in its caller's
    locals. A later serving load (the language server's settings name another model or a URL) first thaws
    and collects what the last one froze, the engine it replaces among it (about 100 ms). A load that fails
    freezes nothing. Not for a process that loads engine after engine without serving from them (a test
    run)."""
    if not serving:
        yield
        return
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
