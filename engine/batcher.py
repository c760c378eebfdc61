"""One engine shared by many callers: requests from several threads run as rows of one engine batch.

Callers (the HTTP server's request threads) call `Batcher.infill` exactly as they would call
`Engine.infill`; it blocks until the rows are denoised. One worker thread owns the engine. Whenever the
engine is free it takes the oldest waiting call and every other waiting call with equal `DenoiseParams`
(rows of one engine call share them), up to `max_rows` rows, and denoises them in one loop.

Joining happens at the next engine call: a call that arrives while a batch runs waits for that batch to
end and forms the next one with whatever else arrived meanwhile. Leaving is per step: each row carries its
call's `cancel` (client gone, superseded, past its deadline), which the loop polls before every step, so
a cancelled row stops being computed at the next step while the others go on (`InfillRequest.cancel`).
A call is answered as soon as its own rows are done, not when the whole batch is.

The waiting room is bounded: past `max_queue` waiting rows a call fails at once with `QueueFull`, which
the server answers with 503 and Retry-After. `batching=False` serves calls one at a time (the baseline
of bench.engine_server).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from engine.denoise import InfillRequest, InfillResult
from engine.engine import Engine
from engine.loader import SpecialTokens
from engine.params import DenoiseParams


class QueueFull(RuntimeError):
    """More rows wait for the engine than the batcher admits."""


class BatcherClosed(RuntimeError):
    """The batcher was closed while a call waited."""


@dataclass(frozen=True)
class BatcherConfig:
    """max_queue: rows that may wait for the engine (beyond them a call fails with QueueFull);
    max_rows: rows in one engine call; batching: False runs one call at a time."""

    max_queue: int = 64
    max_rows: int = 16
    batching: bool = True

    def __post_init__(self) -> None:
        if self.max_queue < 1:
            raise ValueError(f"max_queue must be >= 1, got {self.max_queue}")
        if self.max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {self.max_rows}")


@dataclass(frozen=True)
class BatchReport:
    """What one engine call did: `forwards` is the loop's steps (the most any row ran), `row_forwards`
    the sum of the rows' own steps, i.e. what the calls would have cost one at a time."""

    calls: int
    rows: int
    forwards: int
    row_forwards: int
    new_tokens: int
    seconds: float
    waited: tuple[float, ...]  # seconds each call waited for the engine


class BatchObserver(Protocol):
    def queued(self, rows: int) -> None:
        """Rows waiting for the engine, after a change."""
        ...

    def running(self, rows: int) -> None:
        """Rows in the engine call that starts now (0: the call ended)."""
        ...

    def ran(self, report: BatchReport) -> None:
        ...


@dataclass
class _Call:
    requests: list[InfillRequest]
    params: DenoiseParams
    cancel: Callable[[], bool] | None
    queued_at: float = field(default_factory=time.perf_counter)
    done: threading.Event = field(default_factory=threading.Event)
    results: list[InfillResult] | None = None
    error: BaseException | None = None

    def finish_row(self, i: int, result: InfillResult) -> None:
        """Row i of this call is done; the call is answered once all of its rows are."""
        if self.results is None:
            self.results = [None] * len(self.requests)  # type: ignore[list-item]
        self.results[i] = result
        if all(r is not None for r in self.results):
            self.done.set()

    def rows(self) -> list[InfillRequest]:
        """The call's requests, each polling the call's cancel as well as its own."""
        if self.cancel is None:
            return self.requests
        return [replace(r, cancel=_either(self.cancel, r.cancel)) for r in self.requests]


def _either(first: Callable[[], bool], second: Callable[[], bool] | None) -> Callable[[], bool]:
    return first if second is None else (lambda: first() or second())


class Batcher:
    """An `Engine` stand-in (same `infill` and attributes) that shares the engine between threads."""

    def __init__(self, engine: Engine, config: BatcherConfig = BatcherConfig(),
                 observer: BatchObserver | None = None) -> None:
        self.engine = engine
        self.config = config
        self.observer = observer
        self._waiting: deque[_Call] = deque()
        self._lock = threading.Condition()
        self._closed = False
        self._worker = threading.Thread(target=self._serve, name="dcomplete-batcher", daemon=True)
        self._worker.start()

    # -- what infill reads of an engine ---------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    @property
    def special(self) -> SpecialTokens:
        return self.engine.special

    @property
    def max_length(self) -> int:
        return self.engine.max_length

    @property
    def left_to_right(self) -> bool:
        return self.engine.left_to_right

    @property
    def max_right(self) -> int | None:
        return self.engine.max_right

    # -- calls ----------------------------------------------------------------------------------

    def infill(self, requests: Sequence[InfillRequest], params: DenoiseParams | None = None,
               cancel: Callable[[], bool] | None = None) -> list[InfillResult]:
        """Denoise `requests` as rows of the next engine batch; blocks until they are done."""
        if not requests:
            return []
        self.engine.check(requests)  # a bad canvas fails its own call, not the batch it would join
        call = _Call(list(requests), params or DenoiseParams(), cancel)
        with self._lock:
            if self._closed:
                raise BatcherClosed("the engine is shutting down")
            if self._waiting_rows() + len(call.requests) > self.config.max_queue:
                raise QueueFull(f"{self._waiting_rows()} rows already wait for the engine "
                                f"(at most {self.config.max_queue})")
            self._waiting.append(call)
            self._report_queue()
            self._lock.notify()
        call.done.wait()
        if call.error is not None:
            raise call.error
        assert call.results is not None
        return call.results

    def close(self) -> None:
        """Stop the worker; the running batch stops at its next step, calls still waiting fail with
        BatcherClosed."""
        with self._lock:
            self._closed = True
            for call in self._waiting:
                call.error = BatcherClosed("the engine is shutting down")
                call.done.set()
            self._waiting.clear()
            self._lock.notify_all()
        self._worker.join(timeout=30)

    def _waiting_rows(self) -> int:
        return sum(len(c.requests) for c in self._waiting)

    def _report_queue(self) -> None:
        if self.observer is not None:
            self.observer.queued(self._waiting_rows())

    def _next_batch(self) -> list[_Call] | None:
        """The oldest waiting call and the waiting calls with the same params that fit beside it."""
        with self._lock:
            while not self._waiting and not self._closed:
                self._lock.wait()
            if self._closed:
                return None
            first = self._waiting.popleft()
            batch, rows = [first], len(first.requests)
            if self.config.batching:
                for call in list(self._waiting):
                    if call.params == first.params and rows + len(call.requests) <= self.config.max_rows:
                        self._waiting.remove(call)
                        batch.append(call)
                        rows += len(call.requests)
            self._report_queue()
            return batch

    def _serve(self) -> None:
        while (batch := self._next_batch()) is not None:
            started = time.perf_counter()
            rows = [row for call in batch for row in call.rows()]
            owners = [(call, i) for call in batch for i in range(len(call.requests))]
            if self.observer is not None:
                self.observer.running(len(rows))
            try:
                results = self.engine.infill(rows, batch[0].params, cancel=lambda: self._closed,
                                             on_row=lambda b, result: owners[b][0].finish_row(owners[b][1], result))
            except BaseException as exc:  # noqa: BLE001 - handed to every caller of the batch
                for call in batch:
                    call.error = exc
                    call.done.set()
                continue
            finally:
                if self.observer is not None:
                    self.observer.running(0)
            self._report(batch, results, started)
            for (call, i), result in zip(owners, results):
                if not call.done.is_set():
                    call.finish_row(i, result)

    def _report(self, batch: list[_Call], results: list[InfillResult], started: float) -> None:
        if self.observer is None:
            return
        forwards = [r.stats.forward_passes for r in results]
        self.observer.ran(BatchReport(
            calls=len(batch), rows=len(results), forwards=max(forwards, default=0), row_forwards=sum(forwards),
            new_tokens=sum(r.stats.new_tokens for r in results), seconds=time.perf_counter() - started,
            waited=tuple(started - c.queued_at for c in batch)))
