"""Shared batching: rows leave a running batch one step after their cancel fires; calls that wait while
a batch runs form the next batch together (grouped by params), and the waiting room is bounded."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine import DenoiseParams, Engine, InfillRequest
from engine.batcher import Batcher, BatcherConfig, BatchReport, QueueFull


@pytest.fixture(scope="module", params=["dream", "anchored"])
def engine(request) -> Engine:
    return Engine.load(request.getfixturevalue(f"tiny_{request.param}"), device="cpu")


def canvas(engine: Engine, prefix: str, n: int, suffix: str = "\n") -> list[int]:
    sp, tok = engine.special, engine.tokenizer
    return [sp.bos_id] + tok.encode(prefix) + [sp.mask_id] * n + tok.encode(suffix)


def after(polls: int):
    """A cancel that returns True from its (polls + 1)-th call on, and counts its calls."""
    seen = []

    def cancel() -> bool:
        seen.append(1)
        return len(seen) > polls

    cancel.seen = seen  # type: ignore[attr-defined]
    return cancel


PARAMS = DenoiseParams.fast(threshold=1.0)  # one token a step per span: long runs on a random model


def test_a_cancelled_row_leaves_at_the_next_step_and_the_others_go_on(engine):
    long = canvas(engine, "def f(x):\n    return", 24)
    other = canvas(engine, "import os\n", 12)
    alone = engine.infill([InfillRequest(other)], PARAMS)[0]
    cancel = after(3)
    left, kept = engine.infill([InfillRequest(long, cancel=cancel), InfillRequest(other)], PARAMS)
    assert left.cancelled and left.stats.forward_passes == 3
    assert len(cancel.seen) == 4  # polled before each step it ran, and once more to leave
    assert engine.special.mask_id in left.canvas  # the rest of its span was never written
    assert not kept.cancelled and kept.canvas == alone.canvas
    assert kept.stats.forward_passes == alone.stats.forward_passes


def test_a_row_cancelled_before_its_first_step_costs_nothing(engine):
    other = canvas(engine, "import os\n", 6)
    gone, kept = engine.infill([InfillRequest(canvas(engine, "x = ", 6), cancel=lambda: True),
                                InfillRequest(other)], PARAMS)
    assert gone.cancelled and gone.stats.forward_passes == 0 and gone.stats.positions == 0
    assert kept.canvas == engine.infill([InfillRequest(other)], PARAMS)[0].canvas


def test_each_row_is_handed_over_as_soon_as_it_is_done(engine):
    polls = after(10**6)
    long = InfillRequest(canvas(engine, "def f(x):\n    return", 24), cancel=polls)
    short = InfillRequest(canvas(engine, "import os\n", 3))
    heard = []
    results = engine.infill([long, short], PARAMS, on_row=lambda b, r: heard.append((b, len(polls.seen), r)))
    assert [b for b, _, _ in heard] == [1, 0]
    assert heard[0][1] < results[0].stats.forward_passes  # the long row was still running
    assert heard[0][2] is results[1] and heard[1][2] is results[0]
    assert results[1].canvas == engine.infill([short], PARAMS)[0].canvas


class Reports:
    def __init__(self) -> None:
        self.batches: list[BatchReport] = []
        self.depth: list[int] = []
        self.changed = threading.Condition()

    def queued(self, rows: int) -> None:
        with self.changed:
            self.depth.append(rows)
            self.changed.notify_all()

    def running(self, rows: int) -> None:
        pass

    def ran(self, report: BatchReport) -> None:
        self.batches.append(report)

    def wait_depth(self, rows: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.depth and self.depth[-1] == rows, timeout=30)


def held(gate: threading.Event):
    """A cancel that holds the engine (it is polled by the worker) until `gate` is set."""
    return lambda: not gate.wait(30)


def test_calls_waiting_while_a_batch_runs_form_the_next_batch_by_params(engine):
    reports = Reports()
    batcher = Batcher(engine, BatcherConfig(max_queue=16, max_rows=3), reports)
    gate = threading.Event()
    prompts = ["import os\n", "def g(", "class A:\n    ", "x = [", "print("]
    fast_sampled = DenoiseParams.fast().with_(temperature=0.5)
    try:
        with ThreadPoolExecutor(8) as pool:
            first = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "y = ", 4))], PARAMS, held(gate))
            reports.wait_depth(0)  # the first call is running
            futures = []
            for i, prompt in enumerate(prompts):
                futures.append(pool.submit(batcher.infill, [InfillRequest(canvas(engine, prompt, 5))], PARAMS))
                reports.wait_depth(i + 1)
            sampled = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "z = ", 4))], fast_sampled)
            reports.wait_depth(len(prompts) + 1)
            gate.set()
            results = [f.result(timeout=60)[0] for f in futures]
            first.result(timeout=60), sampled.result(timeout=60)
    finally:
        batcher.close()
    assert [b.calls for b in reports.batches] == [1, 3, 2, 1]  # max_rows 3; the sampled call runs alone
    for prompt, result in zip(prompts, results):
        assert result.canvas == engine.infill([InfillRequest(canvas(engine, prompt, 5))], PARAMS)[0].canvas
    shared = reports.batches[1]
    assert shared.forwards < shared.row_forwards  # three rows, one loop


def test_past_the_waiting_room_a_call_fails_at_once(engine):
    reports = Reports()
    batcher = Batcher(engine, BatcherConfig(max_queue=1), reports)
    gate = threading.Event()
    try:
        with ThreadPoolExecutor(2) as pool:
            running = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "y = ", 2))], PARAMS, held(gate))
            reports.wait_depth(0)
            waiting = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "x = ", 2))], PARAMS)
            reports.wait_depth(1)
            with pytest.raises(QueueFull, match="at most 1"):
                batcher.infill([InfillRequest(canvas(engine, "z = ", 2))], PARAMS)
            gate.set()
            assert not running.result(timeout=60)[0].cancelled
            assert not waiting.result(timeout=60)[0].cancelled
    finally:
        batcher.close()


def test_without_batching_calls_run_one_at_a_time(engine):
    reports = Reports()
    batcher = Batcher(engine, BatcherConfig(batching=False), reports)
    gate = threading.Event()
    try:
        with ThreadPoolExecutor(4) as pool:
            first = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "y = ", 2))], PARAMS, held(gate))
            reports.wait_depth(0)
            rest = [pool.submit(batcher.infill, [InfillRequest(canvas(engine, p, 3))], PARAMS) for p in ("a", "b")]
            reports.wait_depth(2)
            gate.set()
            first.result(timeout=60), [f.result(timeout=60) for f in rest]
    finally:
        batcher.close()
    assert [b.calls for b in reports.batches] == [1, 1, 1]


def test_a_bad_canvas_fails_its_own_call_only(engine):
    batcher = Batcher(engine)
    try:
        with pytest.raises(ValueError, match="no mask"):
            batcher.infill([InfillRequest([engine.special.bos_id, 5, 6])], PARAMS)
        assert not batcher.infill([InfillRequest(canvas(engine, "x = ", 2))], PARAMS)[0].cancelled
    finally:
        batcher.close()
