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

from http_bodies import PATHS, Bodies, EngineFacts, get, into_file, leaf_paths, put
from http_wire import request_bytes

HOST = "127.0.0.1"
POST_ROUTES = ("/v1/completions", "/v1/fim/completions", "/infill", "/completion", "/v1/infill", "/v1/events")
GET_ROUTES = ("/v1/engine", "/v1/models", "/health", "/v1/health", "/metrics")
LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "c", "java", "ruby", "lua", "bash", "json")
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
    "mercury_edit": ("max_tokens", "temperature", "top_p"),
    "tabby_edit": ("temperature", "seed"),
}


@dataclass
class Probe:
    kind: str
    expect: str  # "ok", "refused" or "answered"
    data: bytes
    raw: bool = False  # broken at the HTTP level: a 4xx need not carry the JSON error body
    stream: bool = False


NEXT_EDITS = ["mercury_edit", "tabby_edit"]


class HttpFuzzer:
    def __init__(self, seed: int, facts: EngineFacts, huge_chars: int = 3_000_000, huge_lines: int = 250_000) -> None:
        self.rng = random.Random(seed)
        self.facts = facts
        self.bodies = Bodies(self.rng, facts)
        self.huge_chars = huge_chars
        self.max_lines = huge_lines
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
        first = [self.post(f"warm-up {s}", "ok", PATHS[s], encode(self.bodies.make[s](), self.rng))
                 for s in self.bodies.make]
        fields = {"openai": "prompt", "fim": "prompt", "llama_infill": "input_prefix", "tabby": "segments.prefix",
                  "llama_completion": "prompt"}
        full = []
        for index in range(rows):
            shape = list(fields)[index % len(fields)]
            body = self.bodies.make[shape]()
            for knob in ("n", "temperature", "seed", "random_seed", "stop"):  # one sampler: one batch
                body.pop(knob, None)
            put(body, fields[shape], "x = 1\n" * 20_000 + str(get(body, fields[shape])))
            if shape in ("llama_infill", "llama_completion"):
                body.update(id_slot=100 + index, cache_prompt=True)
            elif shape == "tabby":
                body["segments"]["filepath"] = f"warm_{index}.py"
            full.append(self.post(f"full window {shape}", "ok", PATHS[shape], encode(body, self.rng)))
        return first, full

    def next_probe(self) -> Probe:
        actions = self._actions
        return self.rng.choices([a for _, a in actions], [w for w, _ in actions])[0]()

    def post(self, kind: str, expect: str, path: str, body: bytes, headers: dict[str, str] | None = None,
             raw: bool = False) -> Probe:
        given = {"Content-Type": "application/json"} if headers is None else headers
        return Probe(kind, expect, request_bytes("POST", path, HOST, given, body), raw)

    def valid(self) -> Probe:
        shape = self.bodies.shape()
        body = self.bodies.make[shape]()
        stream = shape in ("openai", "fim", "llama_infill") and self.rng.random() < 0.3
        if stream:
            body["stream"] = True
        probe = self.post(f"valid {shape}", "ok", PATHS[shape], encode(body, self.rng))
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
        shape = self.bodies.shape()
        body = self.bodies.make[shape]()
        what, expect = change(shape, body)
        detail = f"{shape}: {what}" if what else shape
        return self.post(f"{kind} ({detail})", expect, PATHS[shape], encode(body, self.rng))

    def canvas_edges(self) -> Probe:
        """A ready canvas whose lead, span end or stops no editor would send."""
        body = self.bodies.canvas()
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
        shape = self.bodies.shape()
        body = self.bodies.make[shape]()
        put(body, self.rng.choice(NUMERIC_FIELDS[shape]), "@RAW@")
        number = self.rng.choice(ABSURD_NUMBERS)
        data = encode(body, self.rng).replace(b'"@RAW@"', number.encode())
        invalid_json = number in ("NaN", "Infinity", "-Infinity", "0x10", "01")
        return self.post(f"absurd number ({number} in {shape})", "refused" if invalid_json else "answered",
                         PATHS[shape], data)

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
                return self.post("invalid UTF-8", "refused", PATHS["openai"], body)
        return probe

    def huge_string(self) -> Probe:
        shape = self.rng.choice(["openai", "fim", "llama_infill", "llama_completion", "tabby", "document",
                                 *NEXT_EDITS])
        body = self.bodies.make[shape]()
        size = self.rng.randint(100_000, self.huge_chars)
        filler = self.rng.choice(["x", "😀", " ", "ab\t", "\ud800"]) * (size // 2)
        field = {"openai": "prompt", "fim": "suffix", "llama_infill": "input_prefix", "llama_completion": "prompt",
                 "tabby": "segments.prefix", "document": "text", "mercury_edit": "messages.1.content",
                 "tabby_edit": "segments.edit_history.original_code"}[shape]
        if self.rng.random() < 0.25:
            field = {"openai": "extra", "llama_infill": "input_extra"}.get(shape, field)
        if shape in NEXT_EDITS and self.rng.random() < 0.5:  # one huge line of the file, the edit below it
            field = into_file(body, shape, filler + "\n", self.rng.random() < 0.5)
        elif field in ("extra", "input_extra"):
            body[field] = [{"filename": "big.py", "text": filler}]
        else:
            put(body, field, filler + str(get(body, field) or ""))
        return self.post(f"huge string ({shape}.{field})", "answered", PATHS[shape], encode(body, self.rng))

    def huge_lines(self) -> Probe:
        shape = self.rng.choice(["openai", "fim", "llama_infill", "tabby", "document", *NEXT_EDITS])
        body = self.bodies.make[shape]()
        lines = self.rng.randint(100_000, self.max_lines)
        block = self.rng.choice(["x = 1\n", "\n", "def f():\n    pass\n", "s = '''\n", "# é\n", "{\n"])
        many = block * (lines // block.count("\n"))
        field = {"openai": "prompt", "fim": "prompt", "llama_infill": "input_prefix", "tabby": "segments.prefix",
                 "document": "text", "mercury_edit": "messages.1.content",
                 "tabby_edit": "segments.edit_history.current_version"}[shape]
        if shape in NEXT_EDITS:  # the lines go into the file, above the edit and the window
            field = into_file(body, shape, many, self.rng.random() < 0.5)
        elif shape in ("openai", "fim", "llama_infill") and self.rng.random() < 0.4:
            field = {"openai": "suffix", "fim": "suffix", "llama_infill": "input_suffix"}[shape]
            put(body, field, str(get(body, field)) + many)
        else:
            put(body, field, many + str(get(body, field)))
            for spot in body.get("spots", []) if shape == "document" else []:
                spot["start"] += len(many)
                spot["end"] += len(many)
        return self.post(f"100k+ lines ({lines} in {shape}.{field})", "answered", PATHS[shape],
                         encode(body, self.rng))

    def deep_nesting(self) -> Probe:
        depth = self.rng.choice([64, 500, 2_000, 50_000, 1_000_000])
        opener, closer = self.rng.choice([("[", "]"), ('{"a":', "}"), ('[{"b":', "}]")])
        closed = self.rng.random() < 0.7
        nested = opener * depth + ("1" if opener.endswith(":") else "") + (closer * depth if closed else "")
        shape = self.bodies.shape()
        where = self.rng.choice(["top", "known", "unknown"])
        if where == "top":
            data = nested.encode()
        else:
            body = self.bodies.make[shape]()
            path = self.rng.choice(leaf_paths(body)) if where == "known" else "zz_unknown"
            put(body, path, "@RAW@")
            data = encode(body, self.rng).replace(b'"@RAW@"', nested.encode())
        # past a few hundred levels the server refuses the body; shallower, a known field has a wrong type
        # (or an unknown one is ignored)
        sure = depth >= 2_000 or not closed
        return self.post(f"deep nesting ({depth} levels, {where})", "refused" if sure else "answered",
                         PATHS[shape], data)

    def invalid_json(self) -> Probe:
        body = self.rng.choice([
            b"", b"{", b"}", b"{not json", b"{'prompt': 'x'}", b'{"prompt": "x",}', b'{"prompt": "x"} trailing',
            b"\xff\xfe{\x00}\x00", b'{"prompt": "\\x41"}', b'{"prompt": "\\u12"}', b'{"prompt": x}', b"[1, 2",
            b'{"prompt": "a\x01b"}', b'{"a": NaN}', b'{"a": Infinity}', b"\xef\xbb\xbf{}", b"null null",
            '{"prompt": "x"}'.encode("utf-16"), bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 64))),
        ])
        shape = self.bodies.shape()
        expect = "refused" if body not in (b"\xef\xbb\xbf{}",) else "answered"
        return self.post("invalid JSON", expect, PATHS[shape], body)

    def truncated_json(self) -> Probe:
        shape = self.bodies.shape()
        data = encode(self.bodies.make[shape](), self.rng)
        cut = self.rng.randint(0, len(data) - 1)
        return self.post("truncated JSON", "refused", PATHS[shape], data[:cut])

    def wrong_method(self) -> Probe:
        path = self.rng.choice(POST_ROUTES + GET_ROUTES)
        method = self.rng.choice(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "BREW", "post"])
        allowed = {"POST"} if path in POST_ROUTES else {"GET", "HEAD", "OPTIONS"} | ({"POST"} if path == "/v1/health" else set())
        body = encode(self.bodies.make["openai"](), self.rng) if self.rng.random() < 0.5 else b""
        expect = "answered" if method in allowed or method in ("OPTIONS", "HEAD") else "refused"
        return Probe(f"wrong method ({method})", expect, request_bytes(method, path, HOST, {"Content-Type": "application/json"}, body))

    def bad_headers(self) -> Probe:
        rng = self.rng
        shape = self.bodies.shape()
        body = encode(self.bodies.make[shape](), rng)
        path = PATHS[shape]
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
            return self.post("gzip body", "refused", path, gzip.compress(body, mtime=0),
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
