"""The one HTTP entry of `dcomplete engine --ray`: a Ray Serve deployment (one replica) behind Serve's HTTP
proxy that holds a handle to each engine replica's deployment and picks the replica itself
(`remote.serve.routing`). Every request but `GET /health` and `GET /metrics` goes through unchanged to
the replica's engine-server app, which decodes it, checks its API key and answers it.

Faults: a call whose replica dies or cannot be reached is sent once more, to another replica (a
completion changes nothing on the server, so running it twice is safe); with none left it is a 503 with
`Retry-After`. The failed replica is left out until it answers the probe the ingress sends every replica
each `probe_seconds`, so no request waits for Ray Serve to restart it. A call that runs past
`timeout_seconds` is cancelled and answered 504. Each request awaits only its own replica's answer, so a
slow replica holds up only the requests sent to it.
"""

from __future__ import annotations

import asyncio
import hmac
from dataclasses import dataclass
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from remote.ray_refactor import first_line
from remote.serve.fleet_metrics import RouteMetrics
from remote.serve.replica import Answer, Call, Health
from remote.serve.routing import SUPERSEDE_HEADER, Router, RoutingConfig, document_key
from remote.server import schemas

ATTEMPTS = 2
DROPPED_HEADERS = {b"content-length", b"transfer-encoding", b"connection"}


@dataclass(frozen=True)
class IngressSettings:
    """api_key: what `GET /metrics` needs here (the replicas check every other request themselves)."""

    api_key: str | None = None
    routing: RoutingConfig = RoutingConfig()
    timeout_seconds: float = 600.0
    probe_seconds: float = 1.0
    probe_timeout: float = 10.0


class Ingress:
    def __init__(self, replicas: list[Any], settings: IngressSettings) -> None:
        self.replicas = replicas
        self.settings = settings
        self.router = Router(len(replicas), settings.routing)
        self.metrics = RouteMetrics(len(replicas))
        self.health: dict[int, Health] = {}
        self._prober: asyncio.Task[None] | None = None

    async def __call__(self, request: Request) -> Response:
        if self._prober is None:
            self._prober = asyncio.ensure_future(self._probe_forever())
        path, method = request.url.path, request.method
        if path == "/health" and method == "GET":
            if not self.health:  # the first request: no probe has answered yet
                await asyncio.gather(*(self._probe(i) for i in range(len(self.replicas))))
            return self._health()
        headers = tuple(request.headers.raw)
        if path == "/metrics" and method == "GET":
            return await self._metrics(request.headers.get("authorization", ""), headers)
        body = await request.body()
        call = Call(method, path, request.url.query.encode(), headers, body)
        key = document_key(body, request.headers.get(SUPERSEDE_HEADER)) if method == "POST" else None
        return await self._forward(call, key)

    async def _forward(self, call: Call, key: str | None) -> Response:
        import ray.exceptions
        import ray.serve.exceptions

        lost: frozenset[int] = frozenset()
        reason = "every replica is down"
        for attempt in range(ATTEMPTS):
            route = self.router.choose(key, lost)
            if route is None:
                break
            if attempt:
                self.metrics.retries.inc()
            self.metrics.count(route)
            replica = route.replica
            self.metrics.inflight.labels(str(replica)).inc()
            try:
                answer = await self._call(replica, call)
            except TimeoutError:
                return _error(f"replica {replica} did not answer within {self.settings.timeout_seconds:g} s",
                              504, "timeout")
            except ray.exceptions.RayTaskError as exc:  # the replica is alive; its code raised
                return _error(f"replica {replica}: {first_line(exc)}", 500, "server_error")
            except ray.exceptions.TaskCancelledError:  # this request was cancelled (its client left)
                raise
            except (ray.exceptions.RayError, ray.serve.exceptions.RayServeException) as exc:
                self._lost(replica)
                lost |= {replica}
                reason = f"replica {replica} failed ({first_line(exc)})"
                continue
            finally:
                self.router.done(replica)
                self.metrics.inflight.labels(str(replica)).dec()
            return Response(answer.body, answer.status,
                            {k.decode("latin-1"): v.decode("latin-1") for k, v in answer.headers
                             if k.lower() not in DROPPED_HEADERS})
        return _error(f"no engine replica could take the request: {reason}; retry shortly", 503, "unavailable",
                      {"Retry-After": "2"})

    async def _call(self, replica: int, call: Call) -> Answer:
        response = self.replicas[replica].answer.remote(call)

        async def result() -> Answer:
            answer: Answer = await response
            return answer

        try:
            return await asyncio.wait_for(result(), self.settings.timeout_seconds)
        except (asyncio.CancelledError, TimeoutError):
            response.cancel()
            raise

    def _lost(self, replica: int) -> None:
        self.router.failed(replica)
        self.metrics.failures.labels(str(replica)).inc()
        self.metrics.up.labels(str(replica)).set(0)
        self.health.pop(replica, None)

    async def _probe_forever(self) -> None:
        while True:
            await asyncio.gather(*(self._probe(i) for i in range(len(self.replicas))))
            await asyncio.sleep(self.settings.probe_seconds)

    async def _probe(self, replica: int) -> None:
        """A replica that answers is up; one Ray reports dead or unreachable is down; one that is only slow
        (busy computing) stays as it was."""
        import ray.exceptions

        response = self.replicas[replica].health.remote()

        async def result() -> Health:
            health: Health = await response
            return health

        try:
            self.health[replica] = await asyncio.wait_for(result(), self.settings.probe_timeout)
        except TimeoutError:
            response.cancel()
            return
        except ray.exceptions.RayError:
            if not self.router.down[replica]:
                self._lost(replica)
            return
        if self.router.down[replica]:
            self.router.revived(replica)
            self.metrics.up.labels(str(replica)).set(1)

    def _health(self) -> Response:
        replicas = [{"replica": i, "up": not self.router.down[i], "inflight": self.router.inflight[i],
                     **({"host": self.health[i].host, "pid": self.health[i].pid} if i in self.health else {})}
                    for i in range(len(self.replicas))]
        up = sum(1 for r in replicas if r["up"])
        model = next((h.model for h in self.health.values()), None)
        body = {"status": "ok" if up else "unavailable", "model": model, "replicas_up": up, "replicas": replicas}
        return Response(msgspec.json.encode(body), 200 if up else 503, media_type="application/json")

    async def _metrics(self, authorization: str, headers: tuple[tuple[bytes, bytes], ...]) -> Response:
        key = self.settings.api_key
        if key is not None and not hmac.compare_digest(authorization.encode(), f"Bearer {key}".encode()):
            return _error("GET /metrics: this engine needs 'Authorization: Bearer <key>' with its --api-key", 401,
                          "invalid_request_error")
        live = [i for i in range(len(self.replicas)) if not self.router.down[i]]
        answers = await asyncio.gather(*(self._replica_metrics(i, headers) for i in live))
        texts = {i: text for i, text in zip(live, answers) if text is not None}
        return Response(self.metrics.exposition(texts), media_type="text/plain; version=0.0.4; charset=utf-8")

    async def _replica_metrics(self, replica: int, headers: tuple[tuple[bytes, bytes], ...]) -> str | None:
        try:
            answer = await asyncio.wait_for(self._call(replica, Call("GET", "/metrics", headers=headers)),
                                            self.settings.probe_timeout)
        except Exception:  # a replica that cannot say is left out of this scrape; the probe judges it
            return None
        return answer.body.decode() if answer.status == 200 else None


def _error(message: str, status: int, kind: str, headers: dict[str, str] | None = None) -> Response:
    body = msgspec.json.encode(schemas.ErrorOut(schemas.ErrorBody(message, kind, status)))
    return Response(body, status, headers, media_type="application/json")
