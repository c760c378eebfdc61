"""A seeded generator of LSP traffic, valid and hostile, with what the server must do about each message.

Every action returns the bytes to write plus its expectations: the ids that must get exactly one
response, which of them are well-formed requests (a result is due, not an error, unless cancelled), and
`dcomplete/documentState` checks with the state the client's mirror holds after the action. The same
seed gives the same bytes, so a failure replays with `run.py --seed S`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fuzz_mirror import Mirror, utf16_position
from fuzz_wire import encode, frame

URIS = [f"file:///fuzz/module_{i}.py" for i in range(6)]
HOSTILE_URIS = ["", "not a uri", "file:///fuzz/\ud800.py", "file:///fuzz/" + "d/" * 400 + "deep.py", "file:///é 😀.py"]
SNIPPETS = [
    "def {name}({arg}):\n    return {arg} + 1\n",
    "class {Name}:\n    def __init__(self, {arg}):\n        self.{arg} = {arg}\n",
    "import os\n",
    "for {arg} in range(10):\n    print({arg})\n",
    "# {name}: é 😀 中文 𝔘\n",
    "{name} = [{arg} for {arg} in {name}s if {arg}]\n",
    "if {arg}:\n\t{name}()\n",
    "    ",
    "\n",
    "\r\n",
]
WORDS = ["alpha", "beta", "total", "items", "value", "résumé", "名前", "x", "data_frame"]
DOCUMENT_STATE = "dcomplete/documentState"
BIG_DOCUMENT_CHARS = 10 * 1024 * 1024


@dataclass
class Action:
    kind: str
    data: bytes
    messages: int
    requests: list[Any] = field(default_factory=list)
    valid: list[Any] = field(default_factory=list)
    checks: dict[Any, tuple[str, tuple[int, str] | None]] = field(default_factory=dict)
    """documentState id -> (uri, (version, sha256) expected, or None when the document must be unknown)."""


class Fuzzer:
    def __init__(self, seed: int, big_every: int = 2500) -> None:
        self.rng = random.Random(seed)
        self.mirror = Mirror()
        self.big_every = big_every
        self._next_big = big_every
        self.sent_messages = 0
        self._next_id = 0
        self._recent_ids: list[Any] = []
        self.cancelled: set[Any] = set()
        """Ids named by a $/cancelRequest: their answer may be a RequestCancelled error."""
        self._version = 0
        self._valid: list[tuple[float, Callable[[], Action]]] = [
            (6, self.open_document), (30, self.edit), (3, self.replace_all), (3, self.close_document),
            (14, self.inline_completion), (4, self.completion), (4, self.code_action), (5, self.cancel),
            (3, self.configure), (2, self.command),
        ]
        self._hostile: list[tuple[float, Callable[[], Action]]] = [
            (4, self.wrong_types), (4, self.missing_fields), (3, self.unknown_method), (4, self.bad_positions),
            (4, self.range_past_end), (3, self.lone_surrogates), (1, self.huge_line), (3, self.unopened_change),
            (2, self.duplicate_ids), (2, self.notification_with_id), (2, self.batch), (2, self.invalid_json),
            (2, self.truncated_header), (1, self.wrong_version), (1, self.short_length), (1, self.huge_length),
        ]

    # -- plumbing ---------------------------------------------------------------------------------

    def new_id(self) -> int:
        self._next_id += 1
        self._recent_ids = (self._recent_ids + [self._next_id])[-20:]
        return self._next_id

    def request(self, method: str, params: Any, kind: str, valid: bool = True) -> Action:
        msg_id = self.new_id()
        data = frame(encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        return Action(kind, data, 1, [msg_id], [msg_id] if valid else [])

    def notify(self, method: str, params: Any, kind: str) -> Action:
        return Action(kind, frame(encode({"jsonrpc": "2.0", "method": method, "params": params})), 1)

    def checked(self, action: Action, uri: str) -> Action:
        """`action` followed by a documentState request that must report the mirror's state of `uri`."""
        msg_id = self.new_id()
        check = frame(encode({"jsonrpc": "2.0", "id": msg_id, "method": DOCUMENT_STATE, "params": {"uri": uri}}))
        action.data += check
        action.messages += 1
        action.requests.append(msg_id)
        action.checks[msg_id] = (uri, self.mirror.state(uri))
        return action

    def next_action(self) -> Action:
        if self.big_every and self.sent_messages >= self._next_big:
            self._next_big += self.big_every
            action = self.big_document()
        else:
            table = self._valid if self.rng.random() < 0.6 else self._hostile
            action = self.rng.choices([f for _, f in table], [w for w, _ in table])[0]()
        self.sent_messages += action.messages
        return action

    def text(self, lines: int | None = None) -> str:
        rng = self.rng
        parts = []
        for _ in range(lines if lines is not None else rng.randint(0, 12)):
            word = rng.choice(WORDS)
            parts.append(rng.choice(SNIPPETS).format(name=word, Name=word.title(), arg=rng.choice(WORDS)))
        return "".join(parts)

    def open_uri(self) -> str | None:
        return self.rng.choice(sorted(self.mirror.texts)) if self.mirror.texts else None

    def position_in(self, uri: str) -> dict[str, int]:
        text = self.mirror.texts[uri]
        line, character = utf16_position(text, self.rng.randint(0, len(text)))
        return {"line": line, "character": character}

    def range_in(self, uri: str) -> tuple[int, int, int, int]:
        text = self.mirror.texts[uri]
        a, b = sorted(self.rng.randint(0, len(text)) for _ in range(2))
        if b - a > 400:
            b = a + self.rng.randint(0, 400)
        return (*utf16_position(text, a), *utf16_position(text, b))

    @staticmethod
    def lsp_range(span: tuple[int, int, int, int]) -> dict[str, Any]:
        return {"start": {"line": span[0], "character": span[1]}, "end": {"line": span[2], "character": span[3]}}

    def did_open(self, uri: str, text: str, kind: str, language: str = "python") -> Action:
        self._version += 1
        action = self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language, "version": self._version, "text": text}},
            kind,
        )
        self.mirror.open(uri, self._version, text)
        return self.checked(action, uri)

    def did_change(self, uri: str, changes: list[tuple[tuple[int, int, int, int] | None, str]], kind: str) -> Action:
        self._version += 1
        content = [{"text": t} if span is None else {"range": self.lsp_range(span), "text": t} for span, t in changes]
        action = self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": self._version}, "contentChanges": content},
            kind,
        )
        self.mirror.change(uri, self._version, changes)
        return self.checked(action, uri)

    # -- valid traffic ----------------------------------------------------------------------------

    def open_document(self) -> Action:
        return self.did_open(self.rng.choice(URIS), self.text(), "open")

    def edit(self) -> Action:
        uri = self.open_uri()
        if uri is None:
            return self.open_document()
        changes: list[tuple[tuple[int, int, int, int] | None, str]] = []
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            # positions are taken from the text before all changes: later ones may land anywhere
            text = self.rng.choice(["", self.rng.choice(WORDS), self.text(1), "(", "\n    ", "😀"])
            changes.append((self.range_in(uri), text))
        return self.did_change(uri, changes, "edit")

    def replace_all(self) -> Action:
        uri = self.open_uri()
        return self.did_change(uri, [(None, self.text())], "replace") if uri else self.open_document()

    def close_document(self) -> Action:
        uri = self.open_uri() or self.rng.choice(URIS)
        action = self.notify("textDocument/didClose", {"textDocument": {"uri": uri}}, "close")
        self.mirror.close(uri)
        return self.checked(action, uri)

    def inline_completion(self) -> Action:
        uri = self.open_uri()
        if uri is None:
            return self.open_document()
        trigger = self.rng.choice([1, 2])
        params = {"textDocument": {"uri": uri}, "position": self.position_in(uri), "context": {"triggerKind": trigger}}
        return self.request("textDocument/inlineCompletion", params, "inline")

    def completion(self) -> Action:
        uri = self.open_uri()
        if uri is None:
            return self.open_document()
        params = {"textDocument": {"uri": uri}, "position": self.position_in(uri), "context": {"triggerKind": 1}}
        return self.request("textDocument/completion", params, "completion")

    def code_action(self) -> Action:
        uri = self.open_uri()
        if uri is None:
            return self.open_document()
        params = {"textDocument": {"uri": uri}, "range": self.lsp_range(self.range_in(uri)), "context": {"diagnostics": []}}
        return self.request("textDocument/codeAction", params, "code action")

    def cancel(self) -> Action:
        target = self.rng.choice(self._recent_ids) if self._recent_ids else 12345
        self.cancelled.add(target)
        return self.notify("$/cancelRequest", {"id": target}, "cancel")

    def configure(self) -> Action:
        rng = self.rng
        settings = rng.choice([
            {"maxTokens": rng.randint(1, 32)}, {"debounceMs": rng.choice([0, 0, 5])}, {"multiline": rng.random() < 0.5},
            {"threshold": rng.choice([0.5, 0.9, 1.0])}, {"maxTokens": "lots"}, {"unknownKey": 1}, {"languages": 3},
        ])
        return self.notify("workspace/didChangeConfiguration", {"settings": {"dcomplete": settings}}, "configure")

    def command(self) -> Action:
        uri = self.open_uri()
        if uri is None:
            return self.open_document()
        valid = True
        if self.rng.random() < 0.5:
            arguments: list[dict[str, Any]] = [{"uri": uri}]
            name = "dcomplete.fillHoles"
        else:
            span = self.range_in(uri)
            arguments = [{"uri": uri, "range": self.lsp_range(span)}]
            name = "dcomplete.regenerateSelection"
            # the server regenerates whole lines from the start's line on: the empty line after a final
            # line break is not one it can regenerate (an InvalidParams answer is right there)
            text = self.mirror.texts[uri]
            valid = span[0] < text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        return self.request("workspace/executeCommand", {"command": name, "arguments": arguments}, "command", valid)

    # -- hostile traffic --------------------------------------------------------------------------

    def wrong_types(self) -> Action:
        uri = self.open_uri() or URIS[0]
        params = self.rng.choice([
            {"textDocument": {"uri": uri}, "position": {"line": "0", "character": 0}, "context": {"triggerKind": 1}},
            {"textDocument": {"uri": 7}, "position": {"line": 0, "character": 0}, "context": {"triggerKind": 1}},
            {"textDocument": {"uri": uri}, "position": [0, 0], "context": {"triggerKind": "auto"}},
            [1, 2, 3],
            "params",
            None,
        ])
        if self.rng.random() < 0.7:
            return self.request("textDocument/inlineCompletion", params, "wrong types", valid=False)
        action = self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": "v"},
                                                        "contentChanges": [{"text": 5}]}, "wrong types")
        return self.checked(action, uri)

    def missing_fields(self) -> Action:
        uri = self.open_uri() or URIS[0]
        method, params = self.rng.choice([
            ("textDocument/inlineCompletion", {"textDocument": {"uri": uri}}),
            ("textDocument/completion", {"position": {"line": 0, "character": 0}}),
            ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": {"line": 0}}}),
            ("workspace/executeCommand", {"arguments": []}),
            ("workspace/executeCommand", {"command": "dcomplete.regenerateSelection", "arguments": [{"uri": uri}]}),
            (DOCUMENT_STATE, {}),
        ])
        if self.rng.random() < 0.75:
            return self.request(method, params, "missing fields", valid=False)
        action = self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "text": "x = 1\n"}}, "missing fields")
        return self.checked(action, uri)

    def unknown_method(self) -> Action:
        method = self.rng.choice(["textDocument/teleport", "$/somethingNew", "dcomplete/nothing", "", "💥"])
        if self.rng.random() < 0.5:
            return self.request(method, {"x": 1}, "unknown method", valid=False)
        return self.notify(method, {"x": 1}, "unknown method")

    def bad_positions(self) -> Action:
        uri = self.open_uri() or URIS[0]
        line, character = self.rng.choice([(-1, 0), (0, -5), (10**9, 0), (0, 10**9), (2**31, 2**31), (3, 2**53)])
        params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}, "context": {"triggerKind": 1}}
        method = self.rng.choice(["textDocument/inlineCompletion", "textDocument/completion"])
        # positions past the end clamp (a valid request); negative or too large for uinteger are refused
        return self.request(method, params, "bad positions", valid=False)

    def range_past_end(self) -> Action:
        uri = self.open_uri()
        if uri is None:
            return self.open_document()
        lines = self.mirror.texts[uri].count("\n")
        span = self.rng.choice([(lines + 5, 0, lines + 9, 3), (0, 500, 0, 900), (lines, 0, lines + 100, 100),
                                (1, 3, 0, 0), (0, 0, -1, 0)])
        return self.did_change(uri, [(span, self.rng.choice(["", "tail\n", "😀"]))], "range past end")

    def lone_surrogates(self) -> Action:
        text = self.rng.choice(["x = '\ud800'\n", "\udfff", "a\ud83d", "# \udc00\ud800\n"])
        uri = self.open_uri()
        if uri is None or self.rng.random() < 0.3:
            return self.did_open(self.rng.choice(URIS), self.text(2) + text, "lone surrogates")
        return self.did_change(uri, [(self.range_in(uri), text)], "lone surrogates")

    def huge_line(self) -> Action:
        return self.did_open(self.rng.choice(URIS), "x = '" + "y" * 200_000 + "'\n" + self.text(3), "huge line")

    def big_document(self) -> Action:
        """A 10 MB document, opened, edited at its end and closed again."""
        uri = "file:///fuzz/big.py"
        body = self.text(40)
        text = body * (BIG_DOCUMENT_CHARS // max(1, len(body)) + 1)
        action = self.did_open(uri, text, "10 MB document")
        more = self.did_change(uri, [(self.range_in(uri), "tail = 1\n")], "10 MB document")
        closing = self.notify("textDocument/didClose", {"textDocument": {"uri": uri}}, "10 MB document")
        self.mirror.close(uri)
        closing = self.checked(closing, uri)
        for part in (more, closing):
            action.data += part.data
            action.messages += part.messages
            action.requests += part.requests
            action.checks.update(part.checks)
        return action

    def unopened_change(self) -> Action:
        uri = self.rng.choice(HOSTILE_URIS + ["file:///fuzz/never_opened.py"])
        if uri in self.mirror.texts:
            uri = "file:///fuzz/never_opened.py"
        self.mirror.close(uri)
        return self.did_change(uri, [((0, 0, 0, 0), "x")], "change to unopened")

    def duplicate_ids(self) -> Action:
        first = self.inline_completion()
        if not first.requests:
            return first
        again = first.data
        first.data += again
        first.messages += 1
        first.requests.append(first.requests[0])
        first.kind = "duplicate ids"
        return first

    def notification_with_id(self) -> Action:
        uri = self.rng.choice(URIS)
        msg_id = self.new_id()
        self._version += 1
        message = {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/didOpen",
                   "params": {"textDocument": {"uri": uri, "languageId": "python", "version": self._version, "text": "z\n"}}}
        return self.checked(Action("notification with id", frame(encode(message)), 1, [msg_id]), uri)

    def batch(self) -> Action:
        uri = self.open_uri() or URIS[0]
        ids = [self.new_id(), self.new_id()]
        batch = [
            {"jsonrpc": "2.0", "id": ids[0], "method": "textDocument/codeAction", "params": {
                "textDocument": {"uri": uri}, "range": self.lsp_range((0, 0, 0, 0)), "context": {"diagnostics": []}}},
            {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}},
            {"jsonrpc": "2.0", "id": ids[1], "method": DOCUMENT_STATE, "params": {"uri": uri}},
        ]
        return self.checked(Action("batch array", frame(encode(batch)), 1, ids), uri)

    def invalid_json(self) -> Action:
        body = self.rng.choice([b"{not json", b'{"jsonrpc": "2.0", "id": 1', b"\xff\xfe\x00", b"[", b"null", b"42", b'""'])
        return Action("invalid JSON", frame(body), 1)

    def truncated_header(self) -> Action:
        """A header cut short: the message is lost (it has no length), the next one must still work."""
        header = self.rng.choice([b"Content-Len\r\n\r\n", b"Content-Length: \r\n\r\n", b"\r\n", b"Content-Type: x\r\n\r\n"])
        body = encode({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": URIS[0]}}})
        return Action("truncated header", header + body, 1)

    def wrong_version(self) -> Action:
        msg_id = self.new_id()
        version = self.rng.choice(["1.0", None, 2])
        message: dict[str, Any] = {"id": msg_id, "method": "textDocument/completion", "params": {}}
        if version is not None:
            message["jsonrpc"] = version
        return Action("wrong jsonrpc", frame(encode(message)), 1, [msg_id])

    def short_length(self) -> Action:
        body = encode({"jsonrpc": "2.0", "id": 10**9, "method": "shutdown"})
        return Action("short Content-Length", b"Content-Length: %d\r\n\r\n" % (len(body) // 2) + body, 1)

    def huge_length(self) -> Action:
        body = encode({"jsonrpc": "2.0", "id": 10**9 + 1, "method": "shutdown"})
        return Action("huge Content-Length", b"Content-Length: 999999999999\r\n\r\n" + body, 1)


def describe(action: Action) -> str:
    return f"{action.kind}: {json.dumps(action.data[:300].decode('utf-8', 'replace'))}"
