"""Shared batching: rows leave a running batch one step after their cancel fires; calls that arrive while
a loop runs join it between steps (grouped by params, up to max_rows), each row gets what it gets alone,
a call is answered when its own rows are done, and the waiting room is bounded."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest
from engine.batcher import Batcher, BatcherConfig, QueueFull
from engine.families.anchored_step import by_width


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


class Feed:
    """A RowFeed that admits `joining` once, after `at` steps, and records what it hears."""

    def __init__(self, joining=(), at: int = 0) -> None:
        self.joining, self.at = list(joining), at
        self.steps: list[int] = []
        self.done_rows: list[tuple[int, int, object]] = []  # (request index, steps so far, result)

    def admit(self):
        if self.joining and len(self.steps) >= self.at:
            joining, self.joining = self.joining, []
            return joining
        return []

    def stepped(self, rows: int) -> None:
        self.steps.append(rows)

    def done(self, index: int, result) -> None:
        self.done_rows.append((index, len(self.steps), result))


def test_rows_join_a_running_loop_and_leave_it_when_done(engine):
    long = InfillRequest(canvas(engine, "def f(x):\n    return", 20))
    early = InfillRequest(canvas(engine, "import os\n", 3))
    body = "".join(f"    x{i} = {i}\n" for i in range(20))  # its prefill is wider than the others' steps
    joiner = InfillRequest(canvas(engine, f"class A:\n{body}    def g(self):\n        return", 6))
    feed = Feed([joiner], at=2)
    results = engine.infill([long, early], PARAMS, feed=feed)
    order = [index for index, _, _ in feed.done_rows]
    assert sorted(order) == [0, 1, 2] and order[-1] == 0  # the long row is done last
    by_index = {index: (steps, result) for index, steps, result in feed.done_rows}
    assert by_index[1][0] < len(feed.steps) and by_index[2][0] < len(feed.steps)  # answered before the end
    assert results == [by_index[0][1], by_index[1][1]]
    assert max(feed.steps) == 3 and feed.steps[-1] == 1  # three rows at once, then the long row alone
    for request, result in ((long, results[0]), (early, results[1]), (joiner, by_index[2][1])):
        alone = engine.infill([request], PARAMS)[0]
        assert result.canvas == alone.canvas and result.stats.forward_passes == alone.stats.forward_passes


def test_a_row_grows_after_the_widest_row_left(engine):
    params = PARAMS.with_(eos_penalty=100.0)  # no end token: a filled span grows
    wide = InfillRequest(canvas(engine, "x = 1\n" * 40, 2))
    grows = InfillRequest(canvas(engine, "y = ", 4), max_grow=8)
    feed = Feed()
    results = engine.infill([wide, grows], params, feed=feed)
    assert [index for index, _, _ in feed.done_rows] == [0, 1]
    assert len(results[1].spans[0].token_ids) == 12  # it grew, in a batch narrower than it started
    assert results[1].canvas == engine.infill([grows], params)[0].canvas


def test_a_prefill_runs_apart_from_rows_that_write_a_few_tokens():
    need = torch.zeros((3, 200), dtype=torch.bool)
    need[0, :3] = need[1, :150] = need[2, :2] = True
    assert [g.tolist() for g in by_width(need)] == [[1], [0, 2]]
    need[1, 60:] = False
    assert [g.tolist() for g in by_width(need)] == [[0, 1, 2]]


class Reports:
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.depth: list[int] = []
        self.results: list = []
        self.changed = threading.Condition()

    def queued(self, rows: int) -> None:
        with self.changed:
            self.depth.append(rows)
            self.changed.notify_all()

    def admitted(self, waited: float) -> None:
        assert waited >= 0

    def stepped(self, rows: int) -> None:
        self.steps.append(rows)

    def finished(self, result) -> None:
        self.results.append(result)

    def wait_depth(self, rows: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.depth and self.depth[-1] == rows, timeout=60)


class Held:
    """A cancel that holds the engine (the worker polls it before each step) until `release()`;
    `wait()` returns once the worker is held."""

    def __init__(self) -> None:
        self.polled, self.gate = threading.Event(), threading.Event()

    def __call__(self) -> bool:
        self.polled.set()
        return not self.gate.wait(120)

    def wait(self) -> None:
        assert self.polled.wait(60)

    def release(self) -> None:
        self.gate.set()


def test_calls_join_the_running_loop_up_to_max_rows_and_by_params(engine):
    reports = Reports()
    batcher = Batcher(engine, BatcherConfig(max_queue=16, max_rows=3), reports)
    hold = Held()
    prompts = ["import os\n", "def g(", "class A:\n    ", "x = [", "print("]
    sampled_params = DenoiseParams.fast().with_(temperature=0.5)
    sampled_row = InfillRequest(canvas(engine, "z = ", 4))
    try:
        with ThreadPoolExecutor(8) as pool:
            first = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "y = ", 12))], PARAMS, hold)
            hold.wait()  # the first call is running, held before its first step
            futures = []
            for i, prompt in enumerate(prompts):
                futures.append(pool.submit(batcher.infill, [InfillRequest(canvas(engine, prompt, 5))], PARAMS))
                reports.wait_depth(i + 1)
            sampled = pool.submit(batcher.infill, [sampled_row], sampled_params)
            reports.wait_depth(len(prompts) + 1)
            hold.release()
            results = [f.result(timeout=60)[0] for f in futures]
            first.result(timeout=60)
            sampled_result = sampled.result(timeout=60)[0]
    finally:
        batcher.close()
    assert max(reports.steps) == 3  # max_rows
    assert len([r for r in reports.steps if r]) < sum(r.stats.forward_passes for r in reports.results)
    for prompt, result in zip(prompts, results):
        assert result.canvas == engine.infill([InfillRequest(canvas(engine, prompt, 5))], PARAMS)[0].canvas
    # sampling draws from the loop's generator: the same tokens as alone means it ran in a loop of its own
    assert sampled_result.canvas == engine.infill([sampled_row], sampled_params)[0].canvas


def test_past_the_waiting_room_a_call_fails_at_once(engine):
    reports = Reports()
    batcher = Batcher(engine, BatcherConfig(max_queue=1, max_rows=1), reports)
    hold = Held()
    try:
        with ThreadPoolExecutor(2) as pool:
            running = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "y = ", 2))], PARAMS, hold)
            hold.wait()
            waiting = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "x = ", 2))], PARAMS)
            reports.wait_depth(1)
            with pytest.raises(QueueFull, match="at most 1"):
                batcher.infill([InfillRequest(canvas(engine, "z = ", 2))], PARAMS)
            hold.release()
            assert not running.result(timeout=60)[0].cancelled
            assert not waiting.result(timeout=60)[0].cancelled
    finally:
        batcher.close()


def test_without_batching_calls_run_one_at_a_time(engine):
    reports = Reports()
    batcher = Batcher(engine, BatcherConfig(batching=False), reports)
    hold = Held()
    try:
        with ThreadPoolExecutor(4) as pool:
            first = pool.submit(batcher.infill, [InfillRequest(canvas(engine, "y = ", 2))], PARAMS, hold)
            hold.wait()
            rest = [pool.submit(batcher.infill, [InfillRequest(canvas(engine, p, 3))], PARAMS) for p in ("a", "b")]
            reports.wait_depth(2)
            hold.release()
            first.result(timeout=60), [f.result(timeout=60) for f in rest]
    finally:
        batcher.close()
    assert max(reports.steps) == 1 and len(reports.results) == 3


def test_a_bad_canvas_fails_its_own_call_only(engine):
    batcher = Batcher(engine)
    try:
        with pytest.raises(ValueError, match="no mask"):
            batcher.infill([InfillRequest([engine.special.bos_id, 5, 6])], PARAMS)
        assert not batcher.infill([InfillRequest(canvas(engine, "x = ", 2))], PARAMS)[0].cancelled
    finally:
        batcher.close()
