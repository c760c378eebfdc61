"""The engine server's routes: thin handlers that decode a body, run `service` in a request thread against
the shared `Batcher`, and encode the answer. Every 4xx/5xx is `{"error": {"message", "type", "code"}}`.

A request's `Ticket` stops its rows when its client disconnects (a task waits for the ASGI
`http.disconnect` message while the request runs), when a newer request with the same
`X-Dcomplete-Supersede` header arrives, or at its deadline.
"""

from __future__ import annotations

import asyncio
import hmac
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from litestar import Litestar, Request, Response, get, post, route
from litestar.exceptions import HTTPException, NotAuthorizedException
from litestar.response import Stream

from engine import Engine
from engine.batcher import Batcher, BatcherClosed, BatcherConfig, QueueFull
from infill.feedback import FeedbackLog
from infill.tickets import Supersede, Ticket
from remote.server import compat_apis, document_form, edit_api, llama_api, schemas, service, tabby_api
from remote.server.metrics import Metrics

T = TypeVar("T")
SUPERSEDE_HEADER = "x-dcomplete-supersede"
ROUTES = ("/v1/completions", "/v1/fim/completions", "/infill", "/completion", "/v1/infill", "/v1/engine",
          "/v1/models", "/health", "/v1/health", "/v1/events", "/metrics", "/v1/edit/completions")


@dataclass(frozen=True)
class ServerConfig:
    """names: the model names requests may give (the first is the one reported); api_key: bearer token every
    request but /health must carry (None: none needed); max_body: request bytes beyond which it is 413."""

    names: tuple[str, ...]
    api_key: str | None = None
    max_body: int = 4_000_000
    batcher: BatcherConfig = BatcherConfig()


class EngineServer:
    """What the handlers share: the engine behind its batcher, metrics, supersede keys, request threads."""

    def __init__(self, engine: Engine, config: ServerConfig) -> None:
        self.engine = engine
        self.config = config
        self.metrics = Metrics(lambda: engine.doc_cache.nbytes)
        self.batcher = Batcher(engine, config.batcher, self.metrics)
        self.supersede = Supersede()
        # a request thread mostly waits for its batch: enough threads for every row the queue admits
        self.pool = ThreadPoolExecutor(config.batcher.max_queue + config.batcher.max_rows + 4,
                                       thread_name_prefix="dcomplete-request")
        self.info = engine_info(engine, config.names[0])
        self.feedback = FeedbackLog()

    @property
    def name(self) -> str:
        return self.config.names[0]

    def check_model(self, model: str | None) -> None:
        if model is not None and model not in self.config.names:
            raise service.RequestError(f"model {model!r} is not served here; GET /v1/models lists {self.name!r}",
                                       404, "model_not_found")

    async def run(self, request: Request[Any, Any, Any], work: Callable[[Ticket], T]) -> T:
        """`work(ticket)` in a request thread; the ticket stops on disconnect, supersede or deadline."""
        ticket = Ticket(request.headers.get(SUPERSEDE_HEADER) or None)
        self.supersede.claim(ticket)
        watcher = asyncio.ensure_future(_watch_disconnect(request, ticket))
        try:
            return await asyncio.get_running_loop().run_in_executor(self.pool, work, ticket)
        finally:
            watcher.cancel()
            self.supersede.release(ticket)
            if ticket.reason is not None:
                self.metrics.left.labels(ticket.reason).inc()

    def close(self) -> None:
        self.batcher.close()
        self.pool.shutdown(wait=False, cancel_futures=True)


async def _watch_disconnect(request: Request[Any, Any, Any], ticket: Ticket) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            ticket.stop("disconnect")
            return


def engine_info(engine: Engine, name: str) -> schemas.EngineInfo:
    """`GET /v1/engine`: what a remote client needs to build canvases, tokenizer files included."""
    files = {}
    with tempfile.TemporaryDirectory() as folder:
        engine.tokenizer.save_pretrained(folder)
        for path in sorted(Path(folder).iterdir()):
            try:
                files[path.name] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # binary files (a sentencepiece model) are not part of the contract
    sp = engine.special
    return schemas.EngineInfo(name, engine.family, engine.max_length, engine.left_to_right, engine.max_right,
                              schemas.SpecialOut(sp.mask_id, sp.eos_id, sp.pad_id, sp.bos_id), files,
                              str(engine.device))


# -- helpers ----------------------------------------------------------------------------------------


def _server(request: Request[Any, Any, Any]) -> EngineServer:
    server: EngineServer = request.app.state.server
    return server


def _json(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response[bytes]:
    return Response(msgspec.json.encode(value), status_code=status, media_type="application/json", headers=headers)


def _events(chunks: Any) -> Stream:
    return Stream(chunks, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


async def _read(request: Request[Any, Any, Any], kind: type[T]) -> T:
    return _decode(await request.body(), lambda body: msgspec.json.decode(body, type=kind))


def _decode(body: bytes, decode: Callable[[bytes], T]) -> T:
    try:
        return decode(body)
    except msgspec.ValidationError as exc:
        raise service.RequestError(f"invalid request body: {exc}") from None
    except msgspec.DecodeError as exc:
        raise service.RequestError(f"the request body is not valid JSON: {exc}") from None
    except RecursionError:
        # msgspec stops at the interpreter's recursion limit, on the first level past it, at no cost
        raise service.RequestError("the request body nests arrays or objects too deeply to be read "
                                   "(a few hundred levels at most)") from None


def _error(message: str, status: int, kind: str, headers: dict[str, str] | None = None) -> Response[bytes]:
    return _json(schemas.ErrorOut(schemas.ErrorBody(message, kind, status)), status, headers)


# -- routes -----------------------------------------------------------------------------------------


@post("/v1/completions", status_code=200)
async def completions(request: Request[Any, Any, Any]) -> Response[bytes] | Stream:
    """OpenAI completions, or Tabby's (same path): a body with `segments` and no `prompt` is Tabby's."""
    raw = await request.body()
    shape = _decode(raw, lambda b: msgspec.json.decode(b, type=schemas.CompletionsShape))
    if shape.segments is not msgspec.UNSET and shape.prompt is msgspec.UNSET:
        server = _server(request)
        body = _decode(raw, lambda b: msgspec.json.decode(b, type=schemas.TabbyCompletion))
        if body.mode == "next_edit_suggestion":
            edited = await server.run(request, lambda ticket: edit_api.tabby_outcome(server.batcher, body, ticket))
            return _json(tabby_api.completion_body(edited))
        job = tabby_api.completion_job(body)
        outcome = await server.run(request, lambda ticket: service.complete(server.batcher, job, ticket))
        return _json(tabby_api.completion_body(outcome))
    return await _text(request, schemas.Completions, compat_apis.completions_job,
                       compat_apis.completions_body, compat_apis.completions_events, raw)


@post("/v1/fim/completions", status_code=200)
async def fim_completions(request: Request[Any, Any, Any]) -> Response[bytes] | Stream:
    return await _text(request, schemas.FimCompletions, compat_apis.fim_job, compat_apis.fim_body,
                       compat_apis.fim_events)


async def _text(request: Request[Any, Any, Any], kind: type[Any], to_job: Callable[[Any], service.TextJob],
                to_body: Callable[[service.TextOutcome, str], Any],
                to_events: Callable[[service.TextOutcome, str], Any], raw: bytes | None = None
                ) -> Response[bytes] | Stream:
    """An OpenAI-shaped text endpoint: one body, or server-sent events when it asks to stream."""
    server = _server(request)
    raw = await request.body() if raw is None else raw
    body = _decode(raw, lambda b: msgspec.json.decode(b, type=kind))
    server.check_model(body.model)
    job = to_job(body)
    outcome = await server.run(request, lambda ticket: service.complete(server.batcher, job, ticket))
    if body.stream:
        return _events(to_events(outcome, server.name))
    return _json(to_body(outcome, server.name))


@post("/v1/edit/completions", status_code=200)
async def edit_completions(request: Request[Any, Any, Any]) -> Response[bytes] | Stream:
    """Mercury Edit's next edit (`edit_api`). `model` is not checked: Continue picks its prompt by the name."""
    server = _server(request)
    body = await _read(request, schemas.EditCompletions)
    outcome = await server.run(request, lambda ticket: edit_api.mercury_outcome(server.batcher, body, ticket))
    if body.stream:
        return _events(compat_apis.fim_events(outcome, server.name))
    return _json(edit_api.mercury_body(outcome, server.name))


@post("/infill", status_code=200)
async def llama_infill(request: Request[Any, Any, Any]) -> Response[bytes] | Stream:
    return await _llama(request, schemas.LlamaInfill, llama_api.infill_job)


@post("/completion", status_code=200)
async def llama_completion(request: Request[Any, Any, Any]) -> Response[bytes] | Stream:
    return await _llama(request, schemas.LlamaCompletion, llama_api.completion_job)


async def _llama(request: Request[Any, Any, Any], kind: type[Any], to_job: Callable[[Any], service.TextJob]
                 ) -> Response[bytes] | Stream:
    """llama-server's shapes (`llama_api`): one result, a list for `n_cmpl` > 1, or its event stream."""
    server = _server(request)
    body = await _read(request, kind)
    server.check_model(body.model)
    job = to_job(body)
    outcome = await server.run(request, lambda ticket: service.complete(server.batcher, job, ticket))
    n_ctx = server.engine.max_length
    if body.stream:
        return _events(llama_api.events(outcome, body, server.name, n_ctx))
    return _json(llama_api.answer(outcome, body, server.name, n_ctx))


@post("/v1/infill", status_code=200)
async def native_infill(request: Request[Any, Any, Any]) -> Response[bytes]:
    server = _server(request)
    raw = await request.body()
    shape = _decode(raw, lambda b: msgspec.json.decode(b, type=schemas.NativeShape))
    if shape.canvases is not msgspec.UNSET:
        canvases = _decode(raw, lambda b: msgspec.json.decode(b, type=schemas.CanvasInfill))
        results = await server.run(request, lambda t: service.fill_canvases(server.batcher, canvases, t))
        return _json(schemas.CanvasInfillOut([_canvas_out(r) for r in results]))
    body = _decode(raw, lambda b: msgspec.json.decode(b, type=schemas.DocumentInfill))
    result = await server.run(request, lambda t: document_form.fill_document(server.batcher, body, t))
    edits = [schemas.EditOut(e.start, e.end, e.new_text, list(e.token_ids)) for e in result.edits]
    return _json(schemas.DocumentInfillOut(edits, list(result.notes), _stats(result.stats), result.cancelled))


def _stats(stats: Any) -> schemas.StatsOut:
    return schemas.StatsOut(stats.new_tokens, stats.forward_passes, round(stats.seconds, 6), stats.positions)


def _canvas_out(result: Any) -> schemas.CanvasOut:
    spans = [schemas.SpanOut(s.start, s.end, list(s.token_ids)) for s in result.spans]
    return schemas.CanvasOut(list(result.canvas), spans, _stats(result.stats), result.cancelled)


@get("/v1/engine")
async def engine_description(request: Request[Any, Any, Any]) -> Response[bytes]:
    return _json(_server(request).info)


@get("/v1/models")
async def models(request: Request[Any, Any, Any]) -> Response[bytes]:
    server = _server(request)
    return _json({"object": "list", "data": [{"id": server.name, "object": "model", "created": 0,
                                              "owned_by": "dcomplete", "family": server.engine.family}]})


@get("/health")
async def health(request: Request[Any, Any, Any]) -> Response[bytes]:
    return _json({"status": "ok", "model": _server(request).name})


@route("/v1/health", http_method=["GET", "POST"], status_code=200)
async def tabby_health(request: Request[Any, Any, Any]) -> Response[bytes]:
    server = _server(request)
    return _json(tabby_api.health(server.name, str(server.engine.device)))


@post("/v1/events", status_code=200)
async def tabby_events(request: Request[Any, Any, Any]) -> Response[bytes]:
    server = _server(request)
    tabby_api.log_event(server.feedback, await _read(request, schemas.TabbyEvent))
    return Response(b"", status_code=200, media_type="text/plain")


@get("/metrics")
async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
    return Response(_server(request).metrics.text(), media_type="text/plain; version=0.0.4; charset=utf-8")


# -- cross-cutting ----------------------------------------------------------------------------------


async def _check_key(request: Request[Any, Any, Any]) -> None:
    key = _server(request).config.api_key
    if key is None or request.url.path == "/health":
        return
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {key}".encode()):
        raise NotAuthorizedException("this engine needs 'Authorization: Bearer <key>' with its --api-key")


def _on_error(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    if isinstance(exc, service.RequestError):
        return _error(exc.message, exc.status, exc.kind)
    if isinstance(exc, QueueFull):
        return _error(f"the engine is busy: {exc}; retry shortly", 503, "overloaded", {"Retry-After": "1"})
    if isinstance(exc, BatcherClosed):
        return _error(str(exc), 503, "unavailable", {"Retry-After": "5"})
    if isinstance(exc, HTTPException):
        return _error(_http_message(request, exc), exc.status_code, "invalid_request_error", exc.headers)
    return _error(f"internal error: {exc.__class__.__name__}: {exc}", 500, "server_error")


def _http_message(request: Request[Any, Any, Any], exc: HTTPException) -> str:
    where = f"{request.method} {request.url.path}"
    if exc.status_code == 404:
        return f"{where}: no such endpoint (see {', '.join(ROUTES)})"
    if exc.status_code == 405:
        return f"{where}: method not allowed on this endpoint"
    if exc.status_code == 413:
        limit = _server(request).config.max_body
        return f"{where}: the request body is larger than the {limit} bytes this engine accepts (--max-body)"
    return f"{where}: {exc.detail}"


def _count_requests(metrics: Metrics) -> Callable[[Any], Any]:
    """ASGI middleware: requests by endpoint and status, and their latency."""

    def middleware(app: Any) -> Any:
        async def counted(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            loop = asyncio.get_running_loop()
            started, status = loop.time(), [500]

            async def sending(message: Any) -> None:
                if message["type"] == "http.response.start":
                    status[0] = message["status"]
                await send(message)

            try:
                await app(scope, receive, sending)
            finally:
                endpoint = scope["path"] if scope["path"] in ROUTES else "other"
                metrics.requests.labels(endpoint, str(status[0])).inc()
                metrics.latency.labels(endpoint).observe(loop.time() - started)

        return counted

    return middleware


def build_app(server: EngineServer, on_ready: Callable[[], None] | None = None) -> Litestar:
    app = Litestar(
        route_handlers=[completions, fim_completions, llama_infill, llama_completion, native_infill,
                        engine_description, models, health, tabby_health, tabby_events, metrics, edit_completions],
        before_request=_check_key,
        exception_handlers={Exception: _on_error},
        middleware=[_count_requests(server.metrics)],
        request_max_body_size=server.config.max_body,
        on_startup=[on_ready] if on_ready is not None else [],
        on_shutdown=[server.close],
        openapi_config=None,
        debug=False,
    )
    app.state.server = server
    return app
