"""One replica of `dcomplete engine --ray`: the engine server of `remote.server.app` (the same Litestar app,
its endpoints, errors, API key and metrics) in a Ray Serve replica, called by the ingress with whole
requests and answering whole responses. A plain class (no ray import), made a deployment by
`remote.serve.launch`, so its module is what the workers import.

The app runs in this process through ASGI, without a socket: the body is handed over at once, and the
app's own disconnect watcher hears `http.disconnect` when the ingress's call is cancelled (its client
went away; or once the answer is complete, as from a server), which stops the request's rows in the batch as a closed connection does in `dcomplete engine`.
A streamed answer (`stream: true`) comes back whole: its events are written after the completion anyway.
"""

from __future__ import annotations

import asyncio
import os
import socket
from dataclasses import dataclass, field
from typing import Any

from remote.server.app import EngineServer, ServerConfig


@dataclass(frozen=True)
class Call:
    """An HTTP request as the ingress received it."""

    method: str
    path: str
    query: bytes = b""
    headers: tuple[tuple[bytes, bytes], ...] = ()
    body: bytes = b""


@dataclass
class Answer:
    status: int = 500
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""


@dataclass(frozen=True)
class Health:
    """What the ingress's probe hears: the model served and where."""

    model: str
    host: str
    pid: int


class EngineReplica:
    def __init__(self, model: str, device: str | None, config: ServerConfig) -> None:
        from remote.engines import open_engine
        from remote.server.app import build_app

        engine: Any = open_engine(model, device, serving=True)
        names = tuple(dict.fromkeys((*config.names, engine.name)))
        self.server = EngineServer(engine, ServerConfig(names, config.api_key, config.max_body, config.batcher))
        self.app = build_app(self.server)

    async def answer(self, call: Call) -> Answer:
        """The app's answer to `call`. Cancelled (the ingress's client left): the app hears a disconnect."""
        gone = asyncio.Event()
        answer = Answer()
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": call.body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer.status = message["status"]
                answer.headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", [])]
            elif message["type"] == "http.response.body":
                answer.body += message.get("body", b"")
                if not message.get("more_body", False):
                    gone.set()  # as a server says once the answer is out: a stream's watcher waits for it

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": call.method,
                 "scheme": "http", "path": call.path, "raw_path": call.path.encode(), "root_path": "",
                 "query_string": call.query, "headers": list(call.headers), "client": ("127.0.0.1", 0),
                 "server": ("127.0.0.1", 0), "state": {}}
        task = asyncio.ensure_future(self.app(scope, receive, send))  # type: ignore[arg-type]
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            gone.set()
            raise
        finally:
            gone.set()
        return answer

    def health(self) -> Health:
        return Health(self.server.name, socket.gethostname(), os.getpid())
