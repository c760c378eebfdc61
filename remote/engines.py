"""Which engine a front door talks to, decided in one place: the `dcomplete engine` server at a URL, or a
model loaded in this process. The language server (`engineUrl`, `model`, `device`), the CLI (`--engine-url`,
`--model`, `--device`, which `dcomplete engine` also loads with) and the Ray actors open theirs here.

Both kinds answer `engine.api.EngineLike` plus what the front doors show or manage: `name`, `family`,
`device`, `forget(doc_id)`. Importing this module loads neither (the language server imports it at start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine import Engine
    from remote.client import RemoteEngine


def open_engine(
    model: str = "default", device: str | None = None, url: str | None = None, api_key: str | None = None,
    keep_documents: bool = False,
) -> Engine | RemoteEngine:
    """The engine server at `url` (with bearer token `api_key`) when a URL is given, else `model` (a folder,
    a Hugging Face repo id in the local cache, or "default") loaded on `device` (None: cuda when present).

    Raises what opening raises: `remote.client.EngineUnavailable` for a server that cannot be reached or
    answers wrongly, `engine.ModelLoadError` for a checkpoint that does not load, and torch's errors for a
    device; each caller words them for its own user. `keep_documents`: `Engine.load`'s (a local engine)."""
    if url:
        from remote.client import RemoteEngine

        return RemoteEngine(url, api_key or None)
    from engine import Engine

    return Engine.load(spec=model, device=device, keep_documents=keep_documents)
