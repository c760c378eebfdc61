"""Runs a fuzz session against the real server and checks its four properties.

1. The process never exits (until the final shutdown, which must exit 0).
2. Every request gets exactly one response: no id left unanswered, none answered twice.
3. The server's copy of each document equals the client's after every change (`dcomplete/documentState`
   against the mirror), and a document the client never opened (or closed) is unknown to it.
4. A normal request still succeeds at the end. Well-formed requests never get an error along the way
   (unless the fuzzer cancelled them).
"""

from __future__ import annotations

import queue
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz_messages import Action, Fuzzer, describe
from fuzz_report import RunReport
from fuzz_wire import ServerProcess

MAX_IN_FLIGHT = 48
DRAIN_TIMEOUT_S = 180.0
CLIENT_CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {"inlineCompletion": {}, "synchronization": {}},
    "window": {"workDoneProgress": True},
    "workspace": {"applyEdit": True, "configuration": True},
}


@dataclass
class FuzzReport(RunReport):
    messages: int = 0
    requests: int = 0
    responses: int = 0
    unanswered: int = 0
    extra_responses: int = 0
    mismatches: int = 0
    valid_errors: int = 0
    exit_code: int | None = None
    kinds: Counter[str] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return (not self.crashed and self.unanswered == 0 and self.extra_responses == 0 and self.mismatches == 0
                and self.valid_errors == 0 and self.final_request_ok and self.exit_code == 0)

    def summary(self) -> dict[str, Any]:
        return {
            "seed": self.seed, "messages": self.messages, "requests": self.requests, "responses": self.responses,
            "crashes": int(self.crashed), "unanswered": self.unanswered, "extra_responses": self.extra_responses,
            "document_mismatches": self.mismatches, "valid_request_errors": self.valid_errors,
            "final_request_ok": self.final_request_ok, "exit_code": self.exit_code,
            "seconds": round(self.seconds, 1), "rss_before_mb": round(self.rss_before_mb, 1),
            "rss_after_mb": round(self.rss_after_mb, 1),
        }


class FuzzSession:
    def __init__(self, server: ServerProcess, fuzzer: Fuzzer, report: FuzzReport) -> None:
        self.server, self.fuzzer, self.report = server, fuzzer, report
        self.outstanding: Counter[Any] = Counter()
        self.checks: dict[Any, tuple[str, tuple[int, str] | None, str]] = {}
        self.valid: dict[Any, str] = {}
        self.answers: dict[Any, dict[str, Any]] = {}
        self.statuses: list[dict[str, Any]] = []

    def problem(self, text: str) -> None:
        self.report.problem(text)

    def send(self, action: Action) -> None:
        self.server.write(action.data)
        self.report.messages += action.messages
        self.report.kinds[action.kind] += 1
        self.report.requests += len(action.requests)
        self.outstanding.update(action.requests)
        for msg_id, (uri, expected) in action.checks.items():
            self.checks[msg_id] = (uri, expected, describe(action))
        for msg_id in action.valid:
            self.valid[msg_id] = describe(action)

    def receive(self, timeout: float) -> bool:
        """Handle one message from the server; False when none came in time."""
        try:
            message = self.server.messages.get(timeout=timeout)
        except queue.Empty:
            return False
        if message is None:
            self.report.crashed = True
            raise ServerDied(f"the server closed its output (exit status {self.server.process.poll()})")
        if message.get("method") == "dcomplete/status":
            self.statuses.append(message.get("params") or {})
        if "id" not in message or "method" in message or message["id"] == "fuzz-shutdown":
            return True
        msg_id = message["id"]
        self.report.responses += 1
        if self.outstanding[msg_id] <= 0:
            self.report.extra_responses += 1
            self.problem(f"response to id {msg_id!r}, which has no request waiting: {message}")
            return True
        self.outstanding[msg_id] -= 1
        self.answers[msg_id] = message
        self._check(msg_id, message)
        return True

    def _check(self, msg_id: Any, message: dict[str, Any]) -> None:
        if msg_id in self.checks:
            uri, expected, action = self.checks.pop(msg_id)
            result = message.get("result")
            got = None if result is None else (result.get("version"), result.get("sha256"))
            if got != expected:
                self.report.mismatches += 1
                self.problem(f"document {uri!r}: server has {got}, client {expected}, after {action}; "
                             f"answer {str(message)[:300]}")
        if msg_id in self.valid:
            action = self.valid.pop(msg_id)
            error = message.get("error")
            if error and not (error.get("code") == -32800 and msg_id in self.fuzzer.cancelled):
                self.report.valid_errors += 1
                self.problem(f"well-formed request {msg_id!r} got an error {error} after {action}")

    def drain(self, limit: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while sum(self.outstanding.values()) > limit:
            if not self.server.alive() and self.server.messages.empty():
                self.report.crashed = True
                raise ServerDied(f"the server exited with status {self.server.process.poll()}")
            if not self.receive(min(1.0, max(0.0, deadline - time.monotonic()))) and time.monotonic() > deadline:
                return
        while self.receive(0):
            pass

    def request(self, method: str, params: Any, timeout: float = 60.0) -> dict[str, Any]:
        msg_id = f"fixed-{self.report.requests}"
        self.send(Action("fixed request", _frame(msg_id, method, params), 1, [msg_id]))
        deadline = time.monotonic() + timeout
        while msg_id not in self.answers:
            if time.monotonic() > deadline:
                raise ServerDied(f"no answer to {method} within {timeout:.0f} s")
            self.receive(0.5)
        return self.answers[msg_id]


class ServerDied(AssertionError):
    pass


def _frame(msg_id: Any, method: str, params: Any) -> bytes:
    from fuzz_wire import encode, frame

    return frame(encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))


def _notify(session: FuzzSession, method: str, params: Any) -> None:
    from fuzz_wire import encode, frame

    session.server.write(frame(encode({"jsonrpc": "2.0", "method": method, "params": params})))


WARM_URI = "file:///fuzz/warm.py"
WARM_TEXT = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return \n"


def completion_works(session: FuzzSession) -> bool:
    """Open a small file and ask for an invoked inline completion: a result (not an error) must come."""
    _notify(session, "textDocument/didOpen", {"textDocument": {
        "uri": WARM_URI, "languageId": "python", "version": 1, "text": WARM_TEXT}})
    answer = session.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": WARM_URI}, "position": {"line": 4, "character": 11},
        "context": {"triggerKind": 1}}, timeout=120)
    return "result" in answer and isinstance(answer["result"].get("items"), list)


def run_fuzz(messages: int, seed: int, model: str, log_file: Path | None = None, big_every: int = 2500) -> FuzzReport:
    report = FuzzReport(seed)
    with tempfile.TemporaryDirectory(prefix="dcomplete-fuzz-") as state:
        server = ServerProcess({"XDG_STATE_HOME": state, "OMP_NUM_THREADS": "1"}, log_file)
        session = FuzzSession(server, Fuzzer(seed, big_every), report)
        started = time.monotonic()
        try:
            init = session.request("initialize", {
                "processId": None, "capabilities": CLIENT_CAPABILITIES, "initializationOptions": {"dcomplete": {
                    "model": model, "device": "cpu", "maxTokens": 8, "debounceMs": 0}}})
            if "result" not in init:
                raise ServerDied(f"initialize failed: {init}")
            _notify(session, "initialized", {})
            if not completion_works(session):
                raise ServerDied("the warm-up completion failed")
            report.rss_before_mb = server.rss_mb()
            while report.messages < messages:
                session.send(session.fuzzer.next_action())
                session.drain(MAX_IN_FLIGHT, DRAIN_TIMEOUT_S)
            session.drain(0, DRAIN_TIMEOUT_S)
            report.final_request_ok = completion_works(session)
            session.drain(0, DRAIN_TIMEOUT_S)
            report.unanswered = sum(report_count for report_count in session.outstanding.values() if report_count > 0)
            if report.unanswered:
                waiting = [i for i, n in session.outstanding.items() if n > 0][:10]
                session.problem(f"{report.unanswered} requests never answered, e.g. ids {waiting}")
            report.rss_after_mb = server.rss_mb()
        except ServerDied as error:
            session.problem(str(error))
        finally:
            report.seconds = time.monotonic() - started
            report.exit_code = server.close()
    return report
