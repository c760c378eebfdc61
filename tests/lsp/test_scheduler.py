"""The scheduler on a real event loop and a real worker thread: debounce, supersession, cancellation."""

from __future__ import annotations

import asyncio
import threading
import time

from lsp_server.scheduler import CancelCheck, InferenceScheduler


def _steps_until_cancelled(log: list[str], name: str, steps: int = 200, step_s: float = 0.005):
    def work(cancel: CancelCheck) -> str:
        log.append(f"start {name} on {threading.current_thread().name}")
        for _ in range(steps):
            if cancel():
                log.append(f"cancelled {name}")
                return "cancelled"
            time.sleep(step_s)
        log.append(f"done {name}")
        return name

    return work


async def test_a_burst_of_requests_runs_one_inference() -> None:
    scheduler = InferenceScheduler()
    log: list[str] = []

    async def request(name: str) -> str | None:
        return await scheduler.run(
            scheduler.ticket("doc"), _steps_until_cancelled(log, name, 2), debounce_s=0.05
        )

    tasks = []
    for name in "abcde":
        tasks.append(asyncio.ensure_future(request(name)))
        await asyncio.sleep(0.005)
    assert await asyncio.gather(*tasks) == [None, None, None, None, "e"]
    assert scheduler.jobs_run == 1
    assert log[0].startswith("start e on dcomplete-inference")
    scheduler.shutdown()


async def test_a_newer_request_supersedes_a_running_one() -> None:
    scheduler = InferenceScheduler()
    log: list[str] = []
    old = asyncio.ensure_future(scheduler.run(scheduler.ticket("doc"), _steps_until_cancelled(log, "old")))
    await asyncio.sleep(0.05)
    new = asyncio.ensure_future(scheduler.run(scheduler.ticket("doc"), _steps_until_cancelled(log, "new", 2)))
    assert await old is None
    assert await new == "new"
    assert log.index("cancelled old") < log.index("start new on dcomplete-inference_0")


async def test_other_documents_queue_behind_instead_of_superseding() -> None:
    scheduler = InferenceScheduler()
    log: list[str] = []
    first = scheduler.run(scheduler.ticket("a"), _steps_until_cancelled(log, "a", 10))
    second = scheduler.run(scheduler.ticket("b"), _steps_until_cancelled(log, "b", 10))
    assert await asyncio.gather(first, second) == ["a", "b"]
    assert [line.split()[0] for line in log] == ["start", "done", "start", "done"]  # never overlapping


async def test_cancelling_the_task_stops_the_worker_at_its_next_step() -> None:
    scheduler = InferenceScheduler()
    log: list[str] = []
    task = asyncio.ensure_future(scheduler.run(scheduler.ticket("doc"), _steps_until_cancelled(log, "slow")))
    await asyncio.sleep(0.05)
    task.cancel()
    started = time.perf_counter()
    after = await scheduler.run(scheduler.ticket("doc"), _steps_until_cancelled(log, "next", 1))
    assert after == "next" and time.perf_counter() - started < 0.5
    assert "cancelled slow" in log and "done slow" not in log


async def test_a_superseded_request_is_answered_before_its_job_reaches_its_next_step() -> None:
    """The job is inside one long step (a forward) when a newer request supersedes it: the old request
    answers at once, and the new one runs when the worker is free."""
    scheduler = InferenceScheduler()
    inside, release = threading.Event(), threading.Event()

    def one_long_step(cancel: CancelCheck) -> str:
        inside.set()
        release.wait(5)
        return "old"

    old = asyncio.ensure_future(scheduler.run(scheduler.ticket("doc"), one_long_step))
    while not inside.is_set():
        await asyncio.sleep(0.001)
    new = asyncio.ensure_future(scheduler.run(scheduler.ticket("doc"), lambda cancel: "new"))
    assert await asyncio.wait_for(old, 1.0) is None
    assert not new.done()
    release.set()
    assert await new == "new"
    scheduler.shutdown()


async def test_background_pieces_run_only_in_quiet_spells_and_stop_at_shutdown() -> None:
    """Pieces of background work (the kernels' measurement) wait until no job has been open for the quiet
    spell; a request that arrives while one waits runs first; after shutdown none runs."""
    scheduler = InferenceScheduler()
    log: list[str] = []
    held = threading.Event()

    def job(cancel: CancelCheck) -> str:
        held.wait(5)
        log.append("job")
        return "job"

    running = asyncio.ensure_future(scheduler.run(scheduler.ticket("doc"), job))
    piece = asyncio.ensure_future(scheduler.run_when_idle(lambda: log.append("piece") or "piece", 0.05))
    await asyncio.sleep(0.2)
    assert log == [] and scheduler.idle_for() == 0.0  # the job is open: the piece waits
    held.set()
    assert await running == "job" and await piece == "piece"
    assert log == ["job", "piece"]
    scheduler.shutdown()
    assert await scheduler.run_when_idle(lambda: log.append("late"), 0.0) is None
    assert log == ["job", "piece"]
