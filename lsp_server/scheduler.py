"""One inference at a time, off the event loop, with debounce, supersession and cancellation.

The engine is not thread-safe, so all model work runs on a single worker thread fed by a queue (a
one-thread executor). Each job carries a `Ticket` (`infill.tickets`, shared with the engine server); the
ticket is the job's `cancel` callable, which the denoising loop polls between steps, so a cancelled job
stops at the next step.

- Supersede: a new ticket for a key (a document URI) cancels the previous ticket of that key. The
  older request then answers with an empty result at once (never an error), while its job stops at its
  next step on the worker.
- Debounce: a request first sleeps `debounce_s` on the event loop; if a newer one arrived meanwhile it
  never reaches the worker, so a burst of keystrokes costs one inference.
- `$/cancelRequest`: pygls cancels the handler's task; `run` turns that into `ticket.stop()` so the
  worker stops too.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from infill.tickets import Supersede
from infill.tickets import Ticket as Ticket  # re-exported: session and commands import it from here

T = TypeVar("T")
CancelCheck = Callable[[], bool]


STOP_POLL_S = 0.01  # how soon a stopped request is answered while its job still runs
IDLE_POLL_S = 0.05  # how often background work looks whether the worker is free


def _discard(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class InferenceScheduler:
    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dcomplete-inference")
        self._supersede = Supersede()
        self.jobs_run = 0
        self._open = 0  # jobs asked for and not yet answered (a debounced request counts from its arrival)
        self._open_by_key: collections.Counter[str | None] = collections.Counter()
        self._quiet_since = time.monotonic()
        self._shut = False

    def idle_for(self) -> float:
        """Seconds since the last job was answered, 0 while one is open (waiting, debounced or running)."""
        return 0.0 if self._open else time.monotonic() - self._quiet_since

    def waiting(self, key: str) -> bool:
        """Whether a job on `key` was asked for and is not yet answered."""
        return self._open_by_key[key] > 0

    def _opened(self, key: str | None = None) -> None:
        self._open += 1
        self._open_by_key[key] += 1

    def _closed(self, key: str | None = None) -> None:
        self._open -= 1
        self._open_by_key[key] -= 1
        if not self._open_by_key[key]:
            del self._open_by_key[key]
        self._quiet_since = time.monotonic()

    def ticket(self, key: str) -> Ticket:
        """A ticket for a new job on `key`; the previous job on that key is superseded."""
        ticket = Ticket(key)
        self._supersede.claim(ticket)
        return ticket

    async def run(
        self, ticket: Ticket, work: Callable[[CancelCheck], T], debounce_s: float = 0.0
    ) -> T | None:
        """Run `work(cancel)` on the worker; None when the ticket was cancelled before or during it.

        Raises `asyncio.CancelledError` when the awaiting task is cancelled, after cancelling the ticket.
        """
        self._opened(ticket.key)
        try:
            if debounce_s > 0:
                await asyncio.sleep(debounce_s)
            if ticket():
                return None
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self._executor, self._call, ticket, work)
            while not future.done():
                await asyncio.wait({future}, timeout=STOP_POLL_S)
                if ticket() and not future.done():
                    # Answered now: the worker stops at its next step, which may be a whole forward away,
                    # and the editor need not wait for that; what the job raises then is dropped.
                    future.add_done_callback(_discard)
                    return None
            result = future.result()
            return None if ticket() else result
        except asyncio.CancelledError:
            ticket.stop()
            raise
        finally:
            self._supersede.release(ticket)
            self._closed(ticket.key)

    async def run_exclusive(self, work: Callable[[], T]) -> T:
        """Run `work()` on the worker with no ticket (model loading): it queues like any job."""
        loop = asyncio.get_running_loop()
        self._opened()
        try:
            return await loop.run_in_executor(self._executor, work)
        finally:
            self._closed()

    async def run_when_idle(self, work: Callable[[], T], quiet_s: float) -> T | None:
        """Run `work()` on the worker once no job has been open for `quiet_s` seconds (background work in
        short pieces: a request that arrives meanwhile waits for one piece at most); None, without running
        it, once the scheduler is shut down. Not counted as a job: background pieces never hold each other
        up."""
        while not self._shut and self.idle_for() < quiet_s:
            await asyncio.sleep(min(quiet_s, IDLE_POLL_S))
        if self._shut:
            return None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, work)

    def _call(self, ticket: Ticket, work: Callable[[CancelCheck], T]) -> T | None:
        if ticket():
            return None
        self.jobs_run += 1
        return work(ticket)

    def shutdown(self) -> None:
        self._shut = True
        self._supersede.stop_all()
        self._executor.shutdown(wait=False, cancel_futures=True)
