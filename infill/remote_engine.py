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
from typing import Any

import msgspec

from engine import DenoiseParams, InfillRequest, InfillResult, Span, SpecialTokens, Stats

POLL_SECONDS = 0.05


class EngineUnavailable(ConnectionError):
    """The engine server could not be reached, or refused or failed a request."""


class RemoteEngine:
    def __init__(self, url: str, api_key: str | None = None, connect_timeout: float = 5.0) -> None:
        parsed = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise EngineUnavailable(f"engine URL {url!r} is not an http(s) URL")
        self.url = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path.rstrip("/"), "", ""))
        self._parsed = parsed
        self._api_key = api_key
        self.connect_timeout = connect_timeout
        info = self._request("GET", "/v1/engine", None, None)
        try:
            self.name = str(info["model"])
            self.family = str(info["family"])
            self.max_length = int(info["max_length"])
            self.left_to_right = bool(info["left_to_right"])
            self.max_right = None if info.get("max_right") is None else int(info["max_right"])
            self.special = SpecialTokens(**{k: None if v is None else int(v) for k, v in info["special"].items()})
            self.tokenizer = _tokenizer_from_files(info["tokenizer_files"])
        except (KeyError, TypeError, ValueError) as error:
            raise EngineUnavailable(f"engine at {self.url} answered /v1/engine without {error}") from None
        self.device = str(info.get("device") or self.url)

    def infill(
        self,
        requests: Sequence[InfillRequest],
        params: DenoiseParams | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> list[InfillResult]:
        if not requests:
            return []
        body = {"canvases": [_canvas(r) for r in requests], "params": _params(params or DenoiseParams())}
        answer = self._request("POST", "/v1/infill", body, cancel)
        if answer is None:
            return [self._unfilled(r.canvas) for r in requests]
        try:
            return [_result(item) for item in answer["results"]]
        except (KeyError, TypeError, ValueError) as error:
            raise EngineUnavailable(f"engine at {self.url} answered /v1/infill without {error}") from None

    def _unfilled(self, canvas: Sequence[int]) -> InfillResult:
        """What a call cancelled before its answer leaves: the canvas as sent, one span per mask run."""
        mask = self.special.mask_id
        starts = [i for i, t in enumerate(canvas) if t == mask and (i == 0 or canvas[i - 1] != mask)]
        ends = [i + 1 for i, t in enumerate(canvas) if t == mask and (i + 1 == len(canvas) or canvas[i + 1] != mask)]
        spans = [Span(s, e, list(canvas[s:e])) for s, e in zip(starts, ends)]
        return InfillResult(list(canvas), spans, Stats(), cancelled=True)

    def forget(self, doc_id: str) -> None:
        """The server keeps per-document caches under its own budget; nothing to send."""

    def _request(self, method: str, path: str, body: Any, cancel: Callable[[], bool] | None) -> Any:
        """JSON in, JSON out; None when `cancel` turned true before the answer came."""
        p = self._parsed
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
            return msgspec.json.decode(data)
        except msgspec.DecodeError:
            raise EngineUnavailable(f"{where} answered {path} with something that is not JSON") from None


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


def _canvas(request: InfillRequest) -> dict[str, Any]:
    return {
        "ids": list(request.canvas),
        "doc_id": request.doc_id,
        "max_grow": request.max_grow,
        "span_stops": [sorted(stops) for stops in request.span_stops],
        "span_leads": [None if lead is None else lead.text for lead in request.span_leads],
        "span_ends": [None if end is None else _end_spec(end) for end in request.span_ends],
    }


def _end_spec(end: Any) -> dict[str, Any]:
    """A `infill.span_end.TextEnd` as data the server rebuilds it from."""
    slot, spot = end.slot, end.slot.spot
    return {
        "text": end.text,
        "language": end.spec.id,
        "slot": {
            "start": slot.start,
            "end": slot.end,
            "lead": slot.lead,
            "tail": slot.tail,
            "spot": {"start": spot.start, "end": spot.end, "n_masks": spot.n_masks, "kind": spot.kind},
        },
    }


def _params(params: DenoiseParams) -> dict[str, Any]:
    return dataclasses.asdict(params)


def _result(item: dict[str, Any]) -> InfillResult:
    stats = item.get("stats") or {}
    return InfillResult(
        canvas=[int(t) for t in item["canvas"]],
        spans=[Span(int(s["start"]), int(s["end"]), [int(t) for t in s["token_ids"]]) for s in item["spans"]],
        stats=Stats(
            int(stats.get("new_tokens", 0)),
            int(stats.get("forward_passes", 0)),
            float(stats.get("seconds", 0.0)),
            int(stats.get("positions", 0)),
        ),
        cancelled=bool(item.get("cancelled", False)),
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

