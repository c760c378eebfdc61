"""Runs a fuzz session against a real `dcomplete engine` on loopback and checks its properties.

1. Every request gets an HTTP answer (none left without one, none timed out).
2. No answer is a 5xx: bad client input is the client's error.
3. Well-formed requests get a 2xx, certainly bad ones a 4xx, and a 4xx from the application carries the
   server's error body with a message.
4. The server is alive at the end and answers a well-formed completion.
5. Its resident memory (VmRSS from /proc, after a warm-up and at the end) grows less than `max_growth_mb`,
   and less than `max_late_growth_mb` over the second half of the requests: a leak climbs steadily, an
   allocator's high-water mark levels off. (The short run's 2,000 requests of one seed grew 188-315 MB in
   six runs of the same code, most of it in one step at the huge requests, and 6-56 MB over their second
   half; the document cache held under 2 MB of it.)
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from fuzz_report import RunReport
from fuzz_wire import cpu_seconds, rss_mb
from http_bodies import EngineFacts
from http_probes import HOST, HttpFuzzer, Probe
from http_wire import Answer, address, exchange, request_bytes

from tests.support.engine_process import EngineProcess

ANSWER_TIMEOUT_S = 300.0


@dataclass
class HttpFuzzReport(RunReport):
    max_growth_mb: float = 400.0
    max_late_growth_mb: float = 120.0
    requests: int = 0
    answered: int = 0
    unanswered: int = 0
    server_errors: int = 0
    wrong_status: int = 0
    bad_error_bodies: int = 0
    server_cpu_s: float = 0.0
    statuses: Counter[int] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    slowest: dict[str, float] = field(default_factory=dict)
    """The longest answer time of each kind of request."""
    rss_trace_mb: list[float] = field(default_factory=list)
    """RSS after each tenth of the requests: a leak climbs steadily, an allocator's high-water mark levels off."""

    @property
    def growth_mb(self) -> float:
        return self.rss_after_mb - self.rss_before_mb

    @property
    def late_growth_mb(self) -> float:
        """RSS growth over the second half of the requests (the trace's last point against its middle one)."""
        trace = self.rss_trace_mb
        return trace[-1] - trace[len(trace) // 2] if len(trace) > 1 else 0.0

    @property
    def ok(self) -> bool:
        return (not self.crashed and self.unanswered == 0 and self.server_errors == 0 and self.wrong_status == 0
                and self.bad_error_bodies == 0 and self.final_request_ok and self.growth_mb < self.max_growth_mb
                and self.late_growth_mb < self.max_late_growth_mb)

    def classes(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for status, n in self.statuses.items():
            counts[f"{status // 100}xx"] += n
        return dict(sorted(counts.items()))

    def summary(self) -> dict[str, Any]:
        return {
            "seed": self.seed, "requests": self.requests, "answered": self.answered, "unanswered": self.unanswered,
            "status_classes": self.classes(), "server_errors": self.server_errors, "wrong_status": self.wrong_status,
            "bad_error_bodies": self.bad_error_bodies, "crashed": self.crashed,
            "final_request_ok": self.final_request_ok, "seconds": round(self.seconds, 1),
            "requests_per_s": round(self.requests / self.seconds, 1) if self.seconds else 0.0,
            "slowest_s": round(max(self.slowest.values(), default=0.0), 2),
            "server_cpu_s": round(self.server_cpu_s, 1), "rss_before_mb": round(self.rss_before_mb, 1),
            "rss_after_mb": round(self.rss_after_mb, 1), "rss_growth_mb": round(self.growth_mb, 1),
            "rss_late_growth_mb": round(self.late_growth_mb, 1),
            "rss_trace_mb": [round(v) for v in self.rss_trace_mb],
        }


class HttpFuzzSession:
    def __init__(self, engine: EngineProcess, report: HttpFuzzReport) -> None:
        self.engine, self.report = engine, report
        self.where = address(engine.url)

    def problem(self, text: str) -> None:
        self.report.problem(text)

    def send(self, probe: Probe) -> Answer:
        return exchange(self.where, probe.data, ANSWER_TIMEOUT_S)

    def check(self, probe: Probe, answer: Answer) -> None:
        report = self.report
        report.requests += 1
        report.kinds[probe.kind.split(" (")[0]] += 1
        where = f"{probe.kind}: {describe(probe)}"
        if answer.status == 0:
            report.unanswered += 1
            self.problem(f"no answer ({answer.failure}) to {where}")
            return
        report.answered += 1
        report.statuses[answer.status] += 1
        kind = probe.kind.split(" (")[0]
        report.slowest[kind] = max(report.slowest.get(kind, 0.0), answer.seconds)
        status = answer.status
        if status >= 500:
            report.server_errors += 1
            self.problem(f"{status} {answer.body[:300]!r} for {where}")
        elif (probe.expect == "ok" and not 200 <= status < 300) or (probe.expect == "refused" and not 400 <= status < 500):
            report.wrong_status += 1
            self.problem(f"{status} where {probe.expect} was due: {answer.body[:300]!r} for {where}")
        if 400 <= status < 500 and not probe.raw and not probe.data.startswith(b"HEAD "):
            message = error_message(answer)
            if not message:
                report.bad_error_bodies += 1
                self.problem(f"{status} without the error body: {answer.body[:300]!r} for {where}")

    def run(self, probes: Iterator[Probe], count: int, workers: int) -> None:
        """`count` probes, at most `workers` in flight (each on a connection of its own)."""
        assert self.engine.process is not None
        with ThreadPoolExecutor(workers) as pool:
            running: dict[Future[Answer], Probe] = {}
            for sent in range(count):
                if sent and sent % max(1, count // 10) == 0:
                    self.report.rss_trace_mb.append(rss_mb(self.engine.process.pid))
                while len(running) >= workers:
                    self._collect(running, wait(running, return_when=FIRST_COMPLETED).done)
                probe = next(probes)
                running[pool.submit(self.send, probe)] = probe
            self._collect(running, wait(running).done)

    def _collect(self, running: dict[Future[Answer], Probe], done: Any) -> None:
        for future in done:
            self.check(running.pop(future), future.result())


def describe(probe: Probe) -> str:
    text = probe.data[:200].decode("latin-1")
    return json.dumps(text if len(probe.data) <= 200 else f"{text}... ({len(probe.data)} bytes)")


def error_message(answer: Answer) -> str:
    """The message of the server's error body (`{"error": {"message", "type", "code"}}`), "" when the body
    is not that shape or its code is not the status."""
    try:
        error = json.loads(answer.body)["error"]
        good = isinstance(error["message"], str) and isinstance(error["type"], str) and error["code"] == answer.status
        return error["message"] if good else ""
    except (ValueError, KeyError, TypeError):
        return ""


def engine_facts(session: HttpFuzzSession) -> EngineFacts:
    """The server's model name and the ids of a small ready canvas, from `GET /v1/engine`."""
    from tokenizers import Tokenizer

    answer = exchange(session.where, request_bytes("GET", "/v1/engine", HOST, {}, b""), 60)
    info = json.loads(answer.body)
    tokenizer = Tokenizer.from_str(info["tokenizer_files"]["tokenizer.json"])
    special = info["special"]
    return EngineFacts(info["model"], special["mask_id"], special["bos_id"],
                       tuple(tokenizer.encode("def f(x):\n    return", add_special_tokens=False).ids),
                       tuple(tokenizer.encode("\n", add_special_tokens=False).ids))


def completion_works(session: HttpFuzzSession, model: str) -> bool:
    body = {"model": model, "prompt": "def total(items):\n    return ", "suffix": "\n", "max_tokens": 4}
    answer = exchange(session.where, request_bytes("POST", "/v1/completions", HOST,
                                                   {"Content-Type": "application/json"},
                                                   json.dumps(body).encode()), ANSWER_TIMEOUT_S)
    if answer.status != 200:
        session.problem(f"the final completion answered {answer.status or answer.failure}: {answer.body[:300]!r}")
        return False
    return isinstance(json.loads(answer.body)["choices"][0]["text"], str)


def warm_up(session: HttpFuzzSession, fuzzer: HttpFuzzer, workers: int) -> None:
    """One well-formed request of every shape, then `workers` x 2 at once (the most rows the fuzz runs
    together: `workers` requests of up to 2 completions) that fill the model's context: the server's
    working set at its bound before RSS is read."""
    first, full = fuzzer.warm_ups(2 * workers)
    answers = [session.send(probe) for probe in first]
    with ThreadPoolExecutor(len(full)) as pool:
        answers += pool.map(session.send, full)
    for probe, answer in zip(first + full, answers):
        if answer.status != 200:
            raise RuntimeError(f"{probe.kind} answered {answer.status or answer.failure}: {answer.body[:300]!r}")


def run_http_fuzz(requests: int, seed: int, model: str, workers: int = 8, max_growth_mb: float = 400.0,
                  huge_chars: int = 3_000_000, huge_lines: int = 250_000, server_args: Sequence[str] = ()
                  ) -> HttpFuzzReport:
    """`huge_chars`, `huge_lines`: the largest string (characters) and prompt or file (lines) sent."""
    report = HttpFuzzReport(seed, max_growth_mb=max_growth_mb)
    with EngineProcess(["--model", model, *server_args]) as engine:
        assert engine.process is not None
        session = HttpFuzzSession(engine, report)
        fuzzer = HttpFuzzer(seed, engine_facts(session), huge_chars, huge_lines)
        warm_up(session, fuzzer, workers)
        report.rss_before_mb = rss_mb(engine.process.pid)
        started, cpu = time.monotonic(), cpu_seconds(engine.process.pid)
        session.run(iter(fuzzer.next_probe, None), requests, workers)
        report.seconds = time.monotonic() - started
        report.server_cpu_s = cpu_seconds(engine.process.pid) - cpu
        report.crashed = engine.process.poll() is not None
        if report.crashed:
            session.problem(f"the server exited with status {engine.process.poll()}: {''.join(engine.lines)[-2000:]}")
        else:
            report.final_request_ok = completion_works(session, fuzzer.facts.model)
            report.rss_after_mb = rss_mb(engine.process.pid)
    return report
