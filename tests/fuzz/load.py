"""Memory and load: `python tests/fuzz/load.py --requests 5000 --documents 200`.

One document takes a burst of automatic completion requests with an edit before each (typing), sent
without waiting for answers, as an editor does; then documents are opened, completed in and closed one
after another. The server's resident memory (VmRSS from /proc) is read after a warm-up and at the end.
Prints a table, then one JSON line; exit status 0 when every request was answered once and RSS grew
by less than --max-growth-mb.

With --slow-ms, every model call also sleeps that long (the DCOMPLETE_TEST_FAULT hook), to show that
superseded requests are dropped instead of queueing behind a slow model: `inferences` counts the
model runs that happened.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fuzz_driver import CLIENT_CAPABILITIES, FuzzReport, FuzzSession, ServerDied, _notify
from fuzz_messages import Fuzzer
from fuzz_report import model_for_run
from fuzz_wire import ServerProcess, encode, frame

TYPING_URI = "file:///load/typing.py"
BODY = "".join(f"def function_{i}(value):\n    total = value * {i}\n    return total\n\n\n" for i in range(60))
IN_FLIGHT = 32


@dataclass
class LoadReport:
    requests: int = 0
    answered: int = 0
    errors: int = 0
    documents: int = 0
    inferences: int = 0
    rss_warm_mb: float = 0.0
    rss_end_mb: float = 0.0
    seconds: float = 0.0
    exit_code: int | None = None

    @property
    def growth_mb(self) -> float:
        return self.rss_end_mb - self.rss_warm_mb

    def summary(self) -> dict[str, object]:
        return {"requests": self.requests, "answered": self.answered, "errors": self.errors,
                "documents": self.documents, "inferences": self.inferences, "rss_warm_mb": round(self.rss_warm_mb, 1),
                "rss_end_mb": round(self.rss_end_mb, 1), "rss_growth_mb": round(self.growth_mb, 1),
                "seconds": round(self.seconds, 1), "exit_code": self.exit_code}


class Typist:
    """Types at the end of a function body and asks for a completion after every keystroke."""

    def __init__(self, session: FuzzSession, report: LoadReport) -> None:
        self.session, self.report = session, report
        self.version = 1
        self.line = 2
        self.column = len("    return total")
        self.next_id = 0

    def keystroke_and_request(self) -> None:
        self.version += 1
        char = "abcdefgh "[self.version % 9]
        change = {"range": {"start": {"line": self.line, "character": self.column},
                            "end": {"line": self.line, "character": self.column}}, "text": char}
        self.column += 1
        if self.column > 60:  # start typing in the next function, as a person moves on
            self.line = (self.line + 5) % 290
            self.column = len("    return total")
        _notify(self.session, "textDocument/didChange", {
            "textDocument": {"uri": TYPING_URI, "version": self.version}, "contentChanges": [change]})
        self.request(TYPING_URI, self.line, self.column)

    def request(self, uri: str, line: int, column: int) -> None:
        self.next_id += 1
        msg_id = f"load-{self.next_id}"
        params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": column},
                  "context": {"triggerKind": 2}}
        self.session.server.write(frame(encode({"jsonrpc": "2.0", "id": msg_id,
                                                "method": "textDocument/inlineCompletion", "params": params})))
        self.session.outstanding[msg_id] += 1
        self.session.valid[msg_id] = "load request"
        self.report.requests += 1


def run_load(requests: int, documents: int, model: str, slow_ms: int = 0, warmup: int = 200) -> LoadReport:
    report = LoadReport()
    env = {"OMP_NUM_THREADS": "1"}
    if slow_ms:
        env["DCOMPLETE_TEST_FAULT"] = f"slow-engine:{slow_ms}"
    with tempfile.TemporaryDirectory(prefix="dcomplete-load-") as state:
        server = ServerProcess({"XDG_STATE_HOME": state, **env})
        fuzz_report = FuzzReport(0)
        session = FuzzSession(server, Fuzzer(0), fuzz_report)
        started = time.monotonic()
        typist = Typist(session, report)
        try:
            session.request("initialize", {"processId": None, "capabilities": CLIENT_CAPABILITIES,
                                           "initializationOptions": {"dcomplete": {
                                               "model": model, "device": "cpu", "maxTokens": 8, "debounceMs": 0}}})
            _notify(session, "initialized", {})
            _notify(session, "textDocument/didOpen", {"textDocument": {
                "uri": TYPING_URI, "languageId": "python", "version": 1, "text": BODY}})
            for phase, count in (("warm-up", warmup), ("typing", requests)):
                for _ in range(count):
                    typist.keystroke_and_request()
                    session.drain(IN_FLIGHT, 300)
                session.drain(0, 300)
                if phase == "warm-up":
                    report.rss_warm_mb = server.rss_mb()
                    report.requests = 0
            for index in range(documents):
                uri = f"file:///load/document_{index}.py"
                _notify(session, "textDocument/didOpen", {"textDocument": {
                    "uri": uri, "languageId": "python", "version": 1, "text": BODY}})
                typist.request(uri, 2, len("    return total"))
                session.drain(IN_FLIGHT, 300)
                _notify(session, "textDocument/didClose", {"textDocument": {"uri": uri}})
                report.documents += 1
            session.drain(0, 300)
            report.rss_end_mb = server.rss_mb()
        except ServerDied as error:
            print(f"PROBLEM: {error}", file=sys.stderr)
        finally:
            report.seconds = time.monotonic() - started
            report.answered = fuzz_report.responses - 1  # the initialize answer
            report.errors = fuzz_report.valid_errors
            report.inferences = max((int(s.get("inferences", 0)) for s in session.statuses), default=0)
            report.requests += warmup
            report.exit_code = server.close()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--slow-ms", type=int, default=0)
    parser.add_argument("--max-growth-mb", type=float, default=50.0)
    parser.add_argument("--model", help="checkpoint folder (default: a tiny random one)")
    args = parser.parse_args(argv)
    with model_for_run(args.model, "dream") as model:
        report = run_load(args.requests, args.documents, model, args.slow_ms)
    for key, value in report.summary().items():
        print(f"{key:<16} {value!s:>10}")
    ok = report.answered == report.requests and report.errors == 0 and report.growth_mb < args.max_growth_mb
    print(json.dumps({"bench": "lsp_load", "ok": ok, **report.summary()}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
