"""The engine interface over HTTP: canvases go to a `dcomplete engine` server, token ids come back.

`RemoteEngine` has the attributes and the `infill` method of `engine.Engine` that `infill` uses, so
the language server and the CLI keep documents, tree-sitter, canvases and post-processing on the
editor's machine and send only token ids (the canvas form of `POST /v1/infill`). The tokenizer comes
from the server once (`GET /v1/engine`) and runs locally.

Leads and span ends are callbacks in-process; over the wire they travel as the data they are built
from (a lead's text; a span end's slot, document and language), and the server rebuilds them with its
own tokenizer, so a remote engine stops a span exactly where a local one would.

Each call opens its own connection and waits on the socket in short slices, polling `cancel`: a
cancelled call closes the connection, and the server drops the request's rows at its next step. An
engine that cannot be reached or answers an error raises `EngineUnavailable` with one sentence naming
the URL; nothing is retried here (the caller decides when to try again).
"""

from __future__ import annotations

import dataclasses
import http.client
import select
import socket
import tempfile
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from engine import DenoiseParams, InfillRequest, InfillResult, Span, SpecialTokens, Stats
from engine.api import ModelTraits, WithTraits
from engine.denoise.canvas_batch import find_spans
from remote.server import schemas

POLL_SECONDS = 0.05
T = TypeVar("T")


class EngineUnavailable(ConnectionError):
    """The engine server could not be reached, or refused or failed a request."""


class RemoteEngine(WithTraits):
    def __init__(self, url: str, api_key: str | None = None, connect_timeout: float = 5.0) -> None:
        parsed = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise EngineUnavailable(f"engine URL {url!r} is not an http(s) URL")
        self.url = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path.rstrip("/"), "", ""))
        self._parsed = parsed
        self._api_key = api_key
        self.connect_timeout = connect_timeout
        info = self._request("GET", "/v1/engine", None, None, schemas.EngineInfo)
        assert info is not None  # None only when a cancel fires, and there is none here
        self.name, self.family = info.model, info.family
        try:
            tokenizer = _tokenizer_from_files(info.tokenizer_files)
        except (OSError, ValueError) as error:
            message = f"engine at {self.url} sent a tokenizer that does not load ({error})"
            raise EngineUnavailable(message) from None
        special = SpecialTokens(**msgspec.structs.asdict(info.special))
        self.traits = ModelTraits(tokenizer, special, info.max_length, info.left_to_right, info.max_right)
        self.device = info.device or self.url

    def infill(
        self,
        requests: Sequence[InfillRequest],
        params: DenoiseParams | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> list[InfillResult]:
        if not requests:
            return []
        wire_params = schemas.Params(**dataclasses.asdict(params or DenoiseParams()))
        body = schemas.CanvasInfill([_canvas(r) for r in requests], wire_params)
        answer = self._request("POST", "/v1/infill", body, cancel, schemas.CanvasInfillOut)
        if answer is None:
            return [self._unfilled(r.canvas) for r in requests]
        return [_result(item) for item in answer.results]

    def _unfilled(self, canvas: Sequence[int]) -> InfillResult:
        """What a call cancelled before its answer leaves: the canvas as sent, one span per mask run."""
        runs = find_spans(list(canvas), self.special.mask_id)
        spans = [Span(start, end, list(canvas[start:end])) for start, end in runs]
        return InfillResult(list(canvas), spans, Stats(), cancelled=True)

    def warm(self, requests: Sequence[InfillRequest], params: DenoiseParams | None = None) -> bool:
        """Nothing: the engine server keeps each document's cache from its fills (a warm-up over the wire
        would cost a round trip on every open)."""
        return False

    def forget(self, doc_id: str) -> None:
        """The server keeps per-document caches under its own budget; nothing to send."""

    def _request(self, method: str, path: str, body: Any, cancel: Callable[[], bool] | None,
                 answer: type[T]) -> T | None:
        """`body` as JSON in, an `answer` out; None when `cancel` turned true before the answer came."""
        p = self._parsed
        assert p.hostname is not None  # __init__ refused a URL without one
        factory = http.client.HTTPSConnection if p.scheme == "https" else http.client.HTTPConnection
        conn = factory(p.hostname, p.port, timeout=self.connect_timeout)
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        payload = None
        if body is not None:
            payload = msgspec.json.encode(body)
            headers["Content-Type"] = "application/json"
        where = f"engine at {self.url}"
        try:
            conn.request(method, p.path.rstrip("/") + path, body=payload, headers=headers)
            if not _wait_readable(conn, cancel):
                return None
            conn.sock.settimeout(None)
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            raise EngineUnavailable(f"{where} is not reachable ({_reason(error)})") from None
        finally:
            conn.close()
        if response.status != 200:
            raise EngineUnavailable(f"{where} answered {response.status}: {_error_message(data)}")
        try:
            return msgspec.json.decode(data, type=answer)
        except msgspec.DecodeError as error:  # ValidationError included: a field missing or mistyped
            raise EngineUnavailable(f"{where} answered {path} with an unexpected body ({error})") from None


def _wait_readable(conn: http.client.HTTPConnection, cancel: Callable[[], bool] | None) -> bool:
    """Block until the answer starts arriving; False (connection to be closed) once `cancel()` holds."""
    sock = conn.sock
    if sock is None:
        raise ConnectionError("connection closed before the request was sent")
    while True:
        if cancel is not None and cancel():
            return False
        readable, _, _ = select.select([sock], [], [], POLL_SECONDS if cancel is not None else None)
        if readable:
            return True


def _canvas(request: InfillRequest) -> schemas.CanvasIn:
    return schemas.CanvasIn(
        list(request.canvas),
        request.doc_id,
        request.max_grow,
        [sorted(stops) for stops in request.span_stops],
        [None if lead is None else lead.text for lead in request.span_leads],
        [None if end is None else _end_spec(end) for end in request.span_ends],
    )


def _end_spec(end: Any) -> schemas.EndSpec:
    """A `infill.span_end.TextEnd`, or an `infill.line_deadline.LineDeadline` around one, as the data the
    server rebuilds it from."""
    from infill.line_deadline import LineDeadline

    deadline_ms = None
    if isinstance(end, LineDeadline):
        deadline_ms, end = end.ms, end.inner
    slot, spot = end.slot, end.slot.spot
    return schemas.EndSpec(
        end.text,
        end.spec.id,
        schemas.SlotIn(slot.start, slot.end, slot.lead, slot.tail,
                       schemas.SpotIn(spot.start, spot.end, spot.n_masks, spot.kind)),
        list(end.before),
        deadline_ms,
    )


def _result(item: schemas.CanvasOut) -> InfillResult:
    stats = item.stats
    return InfillResult(
        item.canvas,
        [Span(s.start, s.end, s.token_ids) for s in item.spans],
        Stats(stats.new_tokens, stats.forward_passes, stats.seconds, stats.positions),
        item.cancelled,
    )


def _tokenizer_from_files(files: dict[str, str]) -> Any:
    from transformers import AutoTokenizer

    with tempfile.TemporaryDirectory(prefix="dcomplete-tokenizer-") as folder:
        for name, text in files.items():
            if Path(name).name != name:
                raise ValueError(f"tokenizer file name {name!r}")
            Path(folder, name).write_text(text, encoding="utf-8")
        return AutoTokenizer.from_pretrained(folder)


def _reason(error: BaseException) -> str:
    if isinstance(error, socket.timeout | TimeoutError):
        return "timed out"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    return str(error) or type(error).__name__


def _error_message(data: bytes) -> str:
    try:
        return str(msgspec.json.decode(data)["error"]["message"])
    except (msgspec.DecodeError, KeyError, TypeError):
        return data[:200].decode("utf-8", "replace").strip() or "no message"

