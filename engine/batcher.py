"""One engine shared by many callers: requests from several threads run as rows of one engine batch.

Callers (the HTTP server's request threads) call `Batcher.infill` exactly as they would call
`Engine.infill`; it blocks until the call's rows are done. One worker thread owns the engine and runs one
denoising loop at a time, continuously: a loop starts with the oldest waiting call and every waiting call
with equal `DenoiseParams` (rows of one loop share them), and before each step it admits the calls that
arrived meanwhile with the same params, as long as the rows still running plus theirs fit in `max_rows`
(`engine.denoise.state`). Calls with other params wait for the next loop.

Each row carries its call's `cancel` (client gone, superseded, past its deadline), which the loop polls
before every step, so a cancelled row stops being computed at the next step while the others go on
(`InfillRequest.cancel`). A row that is done leaves the batch at once, and a call is answered as soon as
its own rows are done.

The waiting room is bounded: past `max_queue` waiting rows a call fails at once with `QueueFull`, which
the server answers with 503 and Retry-After. `batching=False` serves calls one at a time, nothing joining
(the baseline of bench.engine_server).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from engine.api import WithTraits
from engine.params import DenoiseParams
from engine.types import InfillRequest, InfillResult

if TYPE_CHECKING:
    from engine.engine import Engine


CALIBRATION_IDLE_S = 0.5
"""How long no call must have waited before the worker runs a piece of the engine's calibration (about one
forward; a call that arrives meanwhile waits for that piece: `Engine.calibrate_step`)."""


class QueueFull(RuntimeError):
    """More rows wait for the engine than the batcher admits."""


class BatcherClosed(RuntimeError):
    """The batcher was closed while a call waited."""


@dataclass(frozen=True)
class BatcherConfig:
    """max_queue: rows that may wait for the engine (beyond them a call fails with QueueFull);
    max_rows: rows running at once in the loop; batching: False runs one call at a time."""

    max_queue: int = 64
    max_rows: int = 16
    batching: bool = True

    def __post_init__(self) -> None:
        if self.max_queue < 1:
            raise ValueError(f"max_queue must be >= 1, got {self.max_queue}")
        if self.max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {self.max_rows}")


class BatchObserver(Protocol):
    def queued(self, rows: int) -> None:
        """Rows waiting for the engine, after a change."""
        ...

    def admitted(self, waited: float) -> None:
        """A call's rows entered a loop after waiting `waited` seconds."""
        ...

    def stepped(self, rows: int) -> None:
        """The loop ran one step over `rows` rows (0: the loop ended)."""
        ...

    def finished(self, result: InfillResult) -> None:
        """A row is done (its stats say how many steps it ran)."""
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


class Batcher(WithTraits):
    """An `Engine` stand-in (same `infill` and attributes) that shares the engine between threads."""

    def __init__(self, engine: Engine, config: BatcherConfig = BatcherConfig(),
                 observer: BatchObserver | None = None) -> None:
        self.engine = engine
        self.traits = engine.traits
        self.config = config
        self.observer = observer
        self._waiting: deque[_Call] = deque()
        self._lock = threading.Condition()
        self._closed = False
        self._worker = threading.Thread(target=self._serve, name="dcomplete-batcher", daemon=True)
        self._worker.start()

    # -- calls ----------------------------------------------------------------------------------

    def infill(self, requests: Sequence[InfillRequest], params: DenoiseParams | None = None,
               cancel: Callable[[], bool] | None = None) -> list[InfillResult]:
        """Denoise `requests` as rows of the engine's batch (joining the running loop between two steps
        when their params match it and they fit, else the next loop); blocks until they are done."""
        if not requests:
            return []
        self.engine.check(requests)  # a bad canvas fails its own call, not the batch it would join
        if len(requests) > self.config.max_queue:
            raise ValueError(f"{len(requests)} rows in one call, more than the {self.config.max_queue} "
                             "the engine's queue holds")
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

    def warm(self, requests: Sequence[InfillRequest], params: DenoiseParams | None = None) -> bool:
        """Nothing: an engine shared by many callers keeps each document's cache from its own fills, and a
        warm-up must not hold up their rows."""
        return False

    def close(self) -> None:
        """Stop the worker; the running loop stops at its next step, calls still waiting fail with
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

    def take(self, params: DenoiseParams | None, room: int) -> list[_Call]:
        """Waiting calls, oldest first, with `params` and rows that fit in `room`. params None opens a loop:
        the oldest call is taken whatever its size and sets the params (alone, without batching)."""
        picked: list[_Call] = []
        with self._lock:
            for call in list(self._waiting):
                opening = params is None
                if opening:
                    params = call.params
                elif call.params != params or not self.config.batching or len(call.requests) > room:
                    continue
                self._waiting.remove(call)
                picked.append(call)
                room -= len(call.requests)
                if opening and not self.config.batching:
                    break
            if picked:
                self._report_queue()
        if self.observer is not None:
            now = time.perf_counter()
            for call in picked:
                self.observer.admitted(now - call.queued_at)
        return picked

    def _serve(self) -> None:
        idle = False  # no call since the last piece of the engine's calibration
        while True:
            with self._lock:
                # while the engine measures this machine's kernels, a quiet spell runs pieces of it
                while not self._waiting and not self._closed and not (idle and self.engine.calibrating):
                    idle = not self._lock.wait(CALIBRATION_IDLE_S if self.engine.calibrating else None)
                if self._closed:
                    return
                idle = idle and not self._waiting
            if idle:
                self.engine.calibrate_step()
                continue
            first = self.take(None, self.config.max_rows)
            if not first:
                continue
            loop = _Loop(self, first)
            try:
                self.engine.infill([row for call in first for row in call.rows()], first[0].params,
                                   cancel=lambda: self._closed, feed=loop)
            except BaseException as exc:
                for call, _ in loop.owners:
                    if not call.done.is_set():
                        call.error = exc
                        call.done.set()
            finally:
                loop.stepped(0)


class _Loop:
    """The `RowFeed` of one running loop: admits waiting calls with its params while their rows fit,
    answers each call when its rows are done, and tells the observer."""

    def __init__(self, batcher: Batcher, first: list[_Call]) -> None:
        self.batcher = batcher
        self.params = first[0].params
        self.owners = [(call, i) for call in first for i in range(len(call.requests))]
        self.running = len(self.owners)

    def admit(self) -> list[InfillRequest]:
        calls = self.batcher.take(self.params, self.batcher.config.max_rows - self.running)
        self.owners += [(call, i) for call in calls for i in range(len(call.requests))]
        self.running += sum(len(call.requests) for call in calls)
        return [row for call in calls for row in call.rows()]

    def done(self, index: int, result: InfillResult) -> None:
        call, i = self.owners[index]
        self.running -= 1
        if self.batcher.observer is not None:
            self.batcher.observer.finished(result)
        call.finish_row(i, result)

    def stepped(self, rows: int) -> None:
        if self.batcher.observer is not None:
            self.batcher.observer.stepped(rows)
