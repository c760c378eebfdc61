"""A seeded generator of requests to `dcomplete engine`, valid and hostile, with what the server must answer.

Every `Probe` is the raw bytes of one HTTP/1.1 request plus its expectation: `ok` (a well-formed request:
2xx), `refused` (certainly bad: 4xx) or `answered` (2xx or 4xx: e.g. an unknown field that a lenient
shape ignores, or a huge prompt that is cut to the model's context). A 4xx from the application must
carry the server's error body (`{"error": {"message", "type", "code"}}`); `raw` marks requests that are
broken at the HTTP level, which the HTTP parser refuses before the application sees them. No request is
ever answered with a 5xx. The same seed gives the same bytes, so a failure replays with
`http_run.py --seed S`.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from http_wire import request_bytes

HOST = "127.0.0.1"
POST_ROUTES = ("/v1/completions", "/v1/fim/completions", "/infill", "/completion", "/v1/infill", "/v1/events")
GET_ROUTES = ("/v1/engine", "/v1/models", "/health", "/v1/health", "/metrics")
LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "c", "java", "ruby", "lua", "bash", "json")
PREFIX = "import os\n\n\ndef total(items):\n    result = 0\n    for item in items:\n        result += "
SUFFIX = "\n    return result\n\n\nprint(total([1, 2, 3]))\n"
UNICODE = ["\ud800", "\udfff", "a\ud83d", "\u0000", "\ufeff", "\u202e", "e\u0301", "😀", "𝔘", "\uffff",
           "\U0010ffff", "中文", "\r\n", "\t", "\x7f", "\u2028"]
WRONG_VALUES: list[Any] = [5, -1, 1.5, "text", True, None, [], {}, [1, "a"], {"x": 1}, [[]], ""]
ABSURD_NUMBERS = ["-1", "0", "-0.0", "1e30", "-1e30", "1e308", "1e400", "-1e400", "5e-324", "1000000000000000000000",
                  "-1000000000000000000000", "9223372036854775807", "9223372036854775808", "18446744073709551616",
                  "-9223372036854775809", "NaN", "Infinity", "-Infinity", "2.5", "0x10", "01", "1e-400"]
NUMERIC_FIELDS = {
    "openai": ("max_tokens", "n", "temperature", "top_p", "seed"),
    "fim": ("max_tokens", "temperature", "top_p", "seed", "random_seed"),
    "llama_infill": ("n_predict", "n_cmpl", "id_slot", "t_max_predict_ms", "temperature", "top_p", "seed"),
    "llama_completion": ("n_predict", "n_cmpl", "id_slot", "temperature", "seed"),
    "tabby": ("temperature", "seed"),
    "tabby_event": ("choice_index", "elapsed"),
    "document": ("params.temperature", "params.deadline_ms", "params.seed", "spots.0.n_masks", "spots.0.start",
                 "spots.0.end", "ranges.0.1", "params.steps", "params.near", "params.block", "params.eps",
                 "params.threshold", "params.eos_penalty", "params.top_p", "params.refresh_every"),
    "canvas": ("canvases.0.max_grow", "canvases.0.ids.0", "params.steps", "params.deadline_ms",
               "canvases.0.span_stops.0.0", "params.near", "params.block", "params.eps", "params.temperature",
               "params.refresh_every", "canvases.0.span_ends.0.slot.spot.n_masks", "canvases.0.span_ends.0.before.0",
               "canvases.0.span_ends.0.slot.tail", "canvases.0.span_ends.0.slot.start"),
}


@dataclass(frozen=True)
class EngineFacts:
    """What valid requests need from the server's `GET /v1/engine`: the ids a ready canvas is made of."""

    model: str
    mask_id: int
    bos_id: int | None
    prompt_ids: tuple[int, ...]
    break_ids: tuple[int, ...]


@dataclass
class Probe:
    kind: str
    expect: str  # "ok", "refused" or "answered"
    data: bytes
    raw: bool = False  # broken at the HTTP level: a 4xx need not carry the JSON error body
    stream: bool = False


class HttpFuzzer:
    def __init__(self, seed: int, facts: EngineFacts, huge_chars: int = 3_000_000, huge_lines: int = 250_000) -> None:
        self.rng = random.Random(seed)
        self.facts = facts
        self.huge_chars = huge_chars
        self.max_lines = huge_lines
        self._valid: dict[str, Callable[[], dict[str, Any]]] = {
            "openai": self.openai, "fim": self.fim, "llama_infill": self.llama_infill,
            "llama_completion": self.llama_completion, "tabby": self.tabby, "tabby_event": self.tabby_event,
            "document": self.document, "canvas": self.canvas,
        }
        self._actions: list[tuple[float, Callable[[], Probe]]] = [
            (14, self.valid), (5, self.get), (8, self.wrong_types), (6, self.unknown_fields),
            (4, self.missing_fields), (8, self.absurd_numbers), (5, self.unicode_edges), (3, self.huge_string),
            (2, self.huge_lines), (5, self.deep_nesting), (6, self.invalid_json), (6, self.truncated_json),
            (5, self.wrong_method), (5, self.bad_headers), (3, self.bad_http), (2, self.oversized),
            (3, self.unknown_path), (3, self.canvas_edges),
        ]

    def warm_ups(self, rows: int) -> tuple[list[Probe], list[Probe]]:
        """One well-formed request of every shape, then `rows` whose text fills the model's context, to be
        sent at once: the working set of a full batch, and documents of their own (llama.cpp slots, Tabby
        files) that fill the engine's document cache to its bound, before RSS is read."""
        first = [self.post(f"warm-up {s}", "ok", self.path_of(s), encode(self._valid[s](), self.rng))
                 for s in self._valid]
        fields = {"openai": "prompt", "fim": "prompt", "llama_infill": "input_prefix", "tabby": "segments.prefix",
                  "llama_completion": "prompt"}
        full = []
        for index in range(rows):
            shape = list(fields)[index % len(fields)]
            body = self._valid[shape]()
            for knob in ("n", "temperature", "seed", "random_seed", "stop"):  # one sampler: one batch
                body.pop(knob, None)
            put(body, fields[shape], "x = 1\n" * 20_000 + str(get(body, fields[shape])))
            if shape in ("llama_infill", "llama_completion"):
                body.update(id_slot=100 + index, cache_prompt=True)
            elif shape == "tabby":
                body["segments"]["filepath"] = f"warm_{index}.py"
            full.append(self.post(f"full window {shape}", "ok", self.path_of(shape), encode(body, self.rng)))
        return first, full

    def next_probe(self) -> Probe:
        actions = self._actions
        return self.rng.choices([a for _, a in actions], [w for w, _ in actions])[0]()

    # -- valid bodies, one per request shape ------------------------------------------------------------

    def shape(self) -> str:
        return self.rng.choice(list(self._valid))

    def text(self) -> tuple[str, str]:
        rng = self.rng
        cut = rng.randint(0, len(PREFIX))
        return (PREFIX[:cut] if rng.random() < 0.3 else PREFIX), (SUFFIX if rng.random() < 0.8 else "")

    def extra(self) -> list[dict[str, str]]:
        return [{"filename": "util.py", "text": "def helper(x):\n    return x * 2\n"}] if self.rng.random() < 0.3 else []

    def openai(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        body: dict[str, Any] = {"model": self.facts.model, "prompt": prefix, "suffix": suffix,
                                "max_tokens": self.rng.randint(1, 8), "temperature": 0, "extra": self.extra()}
        if self.rng.random() < 0.3:
            body.update(n=2, temperature=0.7, seed=self.rng.randint(0, 1000), stop=["\n\n"])
        return body

    def fim(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        return {"prompt": prefix, "suffix": suffix, "max_tokens": self.rng.randint(1, 8), "random_seed": 3}

    def llama_infill(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        return {"input_prefix": prefix, "input_suffix": suffix, "n_predict": self.rng.choice([0, 1, 4, 8]),
                "input_extra": self.extra(), "id_slot": self.rng.choice([-1, 0, 1]), "samplers": ["top_k"]}

    def llama_completion(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        return {"prompt": f"<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>", "n_predict": 4,
                "cache_prompt": self.rng.random() < 0.5}

    def tabby(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        return {"language": "python", "segments": {"prefix": prefix, "suffix": suffix, "filepath": "a.py",
                                                   "declarations": [{"filepath": "b.py", "body": "x = 1\n"}]}}

    def tabby_event(self) -> dict[str, Any]:
        return {"type": self.rng.choice(["view", "select", "dismiss"]), "completion_id": "cmpl-1", "choice_index": 0}

    def params(self) -> dict[str, Any]:
        rng = self.rng
        return rng.choice([{}, {"steps": 4, "rule": "reference", "cache": "none"}, {"threshold": 0.5, "near": 2},
                           {"temperature": 0.8, "seed": 7, "top_p": 0.9}, {"block": 2, "eos_penalty": 1.0},
                           {"deadline_ms": 5000, "refresh_every": 3}])

    def document(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        choice = self.rng.randrange(3)
        if choice == 0:
            return {"text": prefix + suffix, "language": "python", "params": self.params(),
                    "spots": [{"start": len(prefix), "end": len(prefix), "n_masks": 4, "kind": "line"}]}
        if choice == 1:
            return {"text": PREFIX + SUFFIX, "ranges": [[4, 4]], "params": self.params()}
        return {"text": "def f(x):\n    # <|hole:4|>\n    return x\n", "holes": True, "params": self.params()}

    def canvas(self) -> dict[str, Any]:
        f = self.facts
        head = ([f.bos_id] if f.bos_id is not None else []) + list(f.prompt_ids)
        ids = head + [f.mask_id] * 4 + list(f.break_ids)
        text = "def f(x):\n    return\n"
        slot = {"start": len(head), "end": len(head) + 4, "lead": " ", "tail": 0,
                "spot": {"start": len(text) - 1, "end": len(text) - 1, "n_masks": 4, "kind": "line"}}
        canvas: dict[str, Any] = {"ids": ids, "span_stops": [list(f.break_ids)], "span_leads": [" "],
                                  "span_ends": [{"text": text, "language": "python", "slot": slot, "before": []}]}
        return {"canvases": [canvas], "params": self.params()}

    def path_of(self, shape: str) -> str:
        return {"openai": "/v1/completions", "fim": "/v1/fim/completions", "llama_infill": "/infill",
                "llama_completion": "/completion", "tabby": "/v1/completions", "tabby_event": "/v1/events",
                "document": "/v1/infill", "canvas": "/v1/infill"}[shape]

    def post(self, kind: str, expect: str, path: str, body: bytes, headers: dict[str, str] | None = None,
             raw: bool = False) -> Probe:
        given = {"Content-Type": "application/json"} if headers is None else headers
        return Probe(kind, expect, request_bytes("POST", path, HOST, given, body), raw)

    def valid(self) -> Probe:
        shape = self.shape()
        body = self._valid[shape]()
        stream = shape in ("openai", "fim", "llama_infill") and self.rng.random() < 0.3
        if stream:
            body["stream"] = True
        probe = self.post(f"valid {shape}", "ok", self.path_of(shape), encode(body, self.rng))
        probe.stream = stream
        return probe

    def get(self) -> Probe:
        path = self.rng.choice(GET_ROUTES)
        method = "POST" if path == "/v1/health" and self.rng.random() < 0.5 else "GET"
        return Probe(f"{method} ({path})", "ok", request_bytes(method, path, HOST, {}, b""))

    # -- hostile bodies -------------------------------------------------------------------------------

    def mutated(self, kind: str, change: Callable[[str, dict[str, Any]], tuple[str, str]]) -> Probe:
        """A valid body of a random shape changed by `change(shape, body)`, which edits `body` in place and
        returns (what it did, the expectation)."""
        shape = self.shape()
        body = self._valid[shape]()
        what, expect = change(shape, body)
        detail = f"{shape}: {what}" if what else shape
        return self.post(f"{kind} ({detail})", expect, self.path_of(shape), encode(body, self.rng))

    def canvas_edges(self) -> Probe:
        """A ready canvas whose lead, span end or stops no editor would send."""
        body = self.canvas()
        canvas = body["canvases"][0]
        edge = self.rng.randrange(5)
        if edge == 0:
            canvas["span_leads"] = [self.rng.choice(["x" * 100_000, "\n" * 5000, "\ud800", "😀" * 50])]
        elif edge == 1:
            canvas["span_ends"][0]["text"] = self.rng.choice(["", "x" * 200_000, "\ud800\n" * 10])
        elif edge == 2:
            canvas["span_stops"] = [[-1, 2**40, 10**9]]
        elif edge == 3:
            canvas["span_ends"][0]["before"] = [2**31, -5, 10**9]
        else:
            body["canvases"] = [canvas] * self.rng.choice([2, 16, 65, 200])
        return self.post("canvas edges", "answered", "/v1/infill", encode(body, self.rng))

    def wrong_types(self) -> Probe:
        def change(shape: str, body: dict[str, Any]) -> tuple[str, str]:
            path = self.rng.choice(leaf_paths(body))
            put(body, path, self.rng.choice(WRONG_VALUES))
            return path, "answered"  # some wrong types are another accepted form (a prompt list, a None)
        return self.mutated("wrong types", change)

    def unknown_fields(self) -> Probe:
        def change(shape: str, body: dict[str, Any]) -> tuple[str, str]:
            name = self.rng.choice(["frobnicate", "top_k", "logprobs", "echo", "", "💥", "a" * 300])
            target = body.setdefault("params", {}) if shape in ("document", "canvas") and self.rng.random() < 0.5 else body
            target[name] = self.rng.choice(WRONG_VALUES)
            # the native shapes refuse unknown fields by name; the compatible ones ignore them
            return name, "refused" if shape in ("document", "canvas") else "answered"
        return self.mutated("unknown field", change)

    def missing_fields(self) -> Probe:
        def change(shape: str, body: dict[str, Any]) -> tuple[str, str]:
            if body:
                del body[self.rng.choice(sorted(body))]
            return "", "answered"
        return self.mutated("missing field", change)

    def absurd_numbers(self) -> Probe:
        shape = self.shape()
        body = self._valid[shape]()
        put(body, self.rng.choice(NUMERIC_FIELDS[shape]), "@RAW@")
        number = self.rng.choice(ABSURD_NUMBERS)
        data = encode(body, self.rng).replace(b'"@RAW@"', number.encode())
        invalid_json = number in ("NaN", "Infinity", "-Infinity", "0x10", "01")
        return self.post(f"absurd number ({number} in {shape})", "refused" if invalid_json else "answered",
                         self.path_of(shape), data)

    def unicode_edges(self) -> Probe:
        def change(shape: str, body: dict[str, Any]) -> tuple[str, str]:
            paths = [p for p in leaf_paths(body) if isinstance(get(body, p), str)] or ["language"]
            edge = "".join(self.rng.choice(UNICODE) for _ in range(self.rng.randint(1, 4)))
            path = self.rng.choice(paths)
            put(body, path, str(get(body, path) or "") + edge)
            return path, "answered"
        probe = self.mutated("unicode", change)
        if self.rng.random() < 0.2:  # bytes that are not UTF-8 at all inside a JSON string
            bad = self.rng.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82"])
            head, _, rest = probe.data.partition(b"\r\n\r\n")
            body = rest.replace(b'": "', b'": "' + bad, 1)
            if body != rest:
                return self.post("invalid UTF-8", "refused", self.path_of("openai"), body)
        return probe

    def huge_string(self) -> Probe:
        shape = self.rng.choice(["openai", "fim", "llama_infill", "llama_completion", "tabby", "document"])
        body = self._valid[shape]()
        size = self.rng.randint(100_000, self.huge_chars)
        filler = self.rng.choice(["x", "😀", " ", "ab\t", "\ud800"]) * (size // 2)
        field = {"openai": "prompt", "fim": "suffix", "llama_infill": "input_prefix", "llama_completion": "prompt",
                 "tabby": "segments.prefix", "document": "text"}[shape]
        if self.rng.random() < 0.25:
            field = {"openai": "extra", "llama_infill": "input_extra"}.get(shape, field)
        if field in ("extra", "input_extra"):
            body[field] = [{"filename": "big.py", "text": filler}]
        else:
            put(body, field, filler + str(get(body, field) or ""))
        return self.post(f"huge string ({shape}.{field})", "answered", self.path_of(shape), encode(body, self.rng))

    def huge_lines(self) -> Probe:
        shape = self.rng.choice(["openai", "fim", "llama_infill", "tabby", "document"])
        body = self._valid[shape]()
        lines = self.rng.randint(100_000, self.max_lines)
        block = self.rng.choice(["x = 1\n", "\n", "def f():\n    pass\n", "s = '''\n", "# é\n", "{\n"])
        many = block * (lines // block.count("\n"))
        field = {"openai": "prompt", "fim": "prompt", "llama_infill": "input_prefix", "tabby": "segments.prefix",
                 "document": "text"}[shape]
        if shape in ("openai", "fim", "llama_infill") and self.rng.random() < 0.4:
            field = {"openai": "suffix", "fim": "suffix", "llama_infill": "input_suffix"}[shape]
            put(body, field, str(get(body, field)) + many)
        else:
            put(body, field, many + str(get(body, field)))
            for spot in body.get("spots", []) if shape == "document" else []:
                spot["start"] += len(many)
                spot["end"] += len(many)
        return self.post(f"100k+ lines ({lines} in {shape}.{field})", "answered", self.path_of(shape),
                         encode(body, self.rng))

    def deep_nesting(self) -> Probe:
        depth = self.rng.choice([64, 500, 2_000, 50_000, 1_000_000])
        opener, closer = self.rng.choice([("[", "]"), ('{"a":', "}"), ('[{"b":', "}]")])
        closed = self.rng.random() < 0.7
        nested = opener * depth + ("1" if opener.endswith(":") else "") + (closer * depth if closed else "")
        shape = self.shape()
        where = self.rng.choice(["top", "known", "unknown"])
        if where == "top":
            data = nested.encode()
        else:
            body = self._valid[shape]()
            path = self.rng.choice(leaf_paths(body)) if where == "known" else "zz_unknown"
            put(body, path, "@RAW@")
            data = encode(body, self.rng).replace(b'"@RAW@"', nested.encode())
        # past a few hundred levels the server refuses the body; shallower, a known field has a wrong type
        # (or an unknown one is ignored)
        sure = depth >= 2_000 or not closed
        return self.post(f"deep nesting ({depth} levels, {where})", "refused" if sure else "answered",
                         self.path_of(shape), data)

    def invalid_json(self) -> Probe:
        body = self.rng.choice([
            b"", b"{", b"}", b"{not json", b"{'prompt': 'x'}", b'{"prompt": "x",}', b'{"prompt": "x"} trailing',
            b"\xff\xfe{\x00}\x00", b'{"prompt": "\\x41"}', b'{"prompt": "\\u12"}', b'{"prompt": x}', b"[1, 2",
            b'{"prompt": "a\x01b"}', b'{"a": NaN}', b'{"a": Infinity}', b"\xef\xbb\xbf{}", b"null null",
            '{"prompt": "x"}'.encode("utf-16"), bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 64))),
        ])
        shape = self.shape()
        expect = "refused" if body not in (b"\xef\xbb\xbf{}",) else "answered"
        return self.post("invalid JSON", expect, self.path_of(shape), body)

    def truncated_json(self) -> Probe:
        shape = self.shape()
        data = encode(self._valid[shape](), self.rng)
        cut = self.rng.randint(0, len(data) - 1)
        return self.post("truncated JSON", "refused", self.path_of(shape), data[:cut])

    def wrong_method(self) -> Probe:
        path = self.rng.choice(POST_ROUTES + GET_ROUTES)
        method = self.rng.choice(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "BREW", "post"])
        allowed = {"POST"} if path in POST_ROUTES else {"GET", "HEAD", "OPTIONS"} | ({"POST"} if path == "/v1/health" else set())
        body = encode(self._valid["openai"](), self.rng) if self.rng.random() < 0.5 else b""
        expect = "answered" if method in allowed or method in ("OPTIONS", "HEAD") else "refused"
        return Probe(f"wrong method ({method})", expect, request_bytes(method, path, HOST, {"Content-Type": "application/json"}, body))

    def bad_headers(self) -> Probe:
        rng = self.rng
        shape = self.shape()
        body = encode(self._valid[shape](), rng)
        path = self.path_of(shape)
        choice = rng.randrange(9)
        if choice == 0:
            kind = rng.choice(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                               "application/json; charset=latin-1", "", "\x01garbage", "*/*"])
            return self.post("content type", "answered", path, body, {"Content-Type": kind})
        if choice == 1:
            return self.post("no content type", "answered", path, body, {})
        if choice == 2:  # the body cut short by its own Content-Length: the JSON is truncated
            short = rng.randint(0, len(body) - 1)
            return self.post("short Content-Length", "refused", path, body, {"Content-Length": str(short)})
        if choice == 3:
            value = rng.choice(["abc", "-1", "1e3", "10, 20", "99999999999999999999"])
            return self.post(f"bad Content-Length ({value})", "refused", path, body, {"Content-Length": value},
                             raw=True)
        if choice == 4:
            return self.post("chunked", "answered", path, chunked(body, rng),
                             {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        if choice == 5:
            return self.post("bad chunking", "refused", path, b"zz\r\n" + body + b"\r\n0\r\n\r\n",
                             {"Transfer-Encoding": "chunked"}, raw=True)
        if choice == 6:
            return self.post("gzip body", "refused", path, gzip.compress(body),
                             {"Content-Type": "application/json", "Content-Encoding": "gzip"})
        if choice == 7:
            name = rng.choice(["X-Dcomplete-Supersede", "Authorization", "X-Junk", "Accept"])
            value = rng.choice(["", "k" * 20_000, "Bearer \u00e9", "a\x00b", "😀", "key-1"])
            header_raw = "\x00" in value
            expect = "refused" if header_raw else "answered"
            return Probe(f"odd header ({name})", expect, request_bytes("POST", path, HOST, {name: value}, body), header_raw)
        return self.post("Expect: 100-continue", "answered", path, body,
                         {"Content-Type": "application/json", "Expect": "100-continue"})

    def bad_http(self) -> Probe:
        data = self.rng.choice([
            b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", b"GET\r\n\r\n", b"\r\n\r\n",
            b"GET /health HTTP/1.1\r\n\r\n", b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
            b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        ])
        return Probe("broken HTTP", "refused", data, raw=True)

    def oversized(self) -> Probe:
        """A body past the server's 4 MB `--max-body`: whole, chunked, or announced by a Content-Length of 1 TB."""
        body = b'{"prompt": "' + b"x" * 4_100_000 + b'"}'
        path = self.rng.choice(POST_ROUTES)
        way = self.rng.randrange(3)
        if way == 1:
            return self.post("oversized body", "refused", path, chunked(body, self.rng, 65_536),
                             {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        if way == 2:
            return self.post("oversized body", "refused", path, b'{"prompt": "x"}', {"Content-Length": str(10**12)})
        return self.post("oversized body", "refused", path, body)

    def unknown_path(self) -> Probe:
        path = self.rng.choice(["/", "/v2/completions", "/v1/completions/", "//v1//infill", "/v1/%00",
                                "/../../etc/passwd", "/v1/engine?x=" + "y" * 500, "/%F0%9F%92%A5", "/infill%20"])
        method = self.rng.choice(["GET", "POST"])
        expect = "answered" if "?" in path or path == "/v1/completions/" else "refused"
        return Probe(f"unknown path ({path[:20]})", expect, request_bytes(method, path, HOST, {}, b"{}"))


# -- helpers ------------------------------------------------------------------------------------------------


def encode(body: Any, rng: random.Random) -> bytes:
    return json.dumps(body, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def chunked(body: bytes, rng: random.Random, largest: int = 64) -> bytes:
    out, at = bytearray(), 0
    while at < len(body):
        size = rng.randint(1, largest)
        out += b"%x\r\n" % len(body[at : at + size]) + body[at : at + size] + b"\r\n"
        at += size
    return bytes(out + b"0\r\n\r\n")


def leaf_paths(value: Any, prefix: str = "") -> list[str]:
    """Dotted paths of every field, list item and nested field."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    paths = []
    for key, child in items:
        path = f"{prefix}{key}"
        paths.append(path)
        paths += leaf_paths(child, path + ".")
    return paths


def get(body: Any, path: str) -> Any:
    for key in path.split("."):
        body = body[int(key)] if isinstance(body, list) else body.get(key) if isinstance(body, dict) else None
    return body


def put(body: Any, path: str, value: Any) -> None:
    """Set the field at a dotted path, making the objects on the way; a list index past the end appends."""
    keys = path.split(".")
    for key in keys[:-1]:
        if isinstance(body, list):
            if int(key) >= len(body):
                body.append({})
            body = body[min(int(key), len(body) - 1)]
        else:
            body = body.setdefault(key, {})
    last = keys[-1]
    if isinstance(body, list):
        if int(last) >= len(body):
            body.append(value)
        else:
            body[int(last)] = value
    else:
        body[last] = value
