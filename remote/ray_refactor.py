"""`dcomplete refactor --ray`: the model runs in a pool of Ray actors; this process (the driver) plans
every file before and writes after, through the same code as a local run (`cli.refactor_command`).

Why Ray Core actors and not Ray Data `map_batches` with an actor pool: both batch inside an actor (here
a call carries `--batch` jobs, the same batches in the same order as a local run, so the edits are the
same) and both give back-pressure (here each actor holds at most `DEPTH` calls: one running, one
waiting so it never idles for a round trip; the driver sends nothing more until one comes back). But
the unit that must not be lost here is a file: Ray Data retries or drops whole blocks and ends the
dataset on an error, with no hook to count failures per file, to send a dead actor's batch to another
actor, or to stop the cluster work on Ctrl-C before anything is written; and it would put pyarrow and
pandas (`ray[data]`) on every node. A few dozen lines of scheduling over `ray.wait` do all of that.

Failures: an actor that dies (killed, out of memory) fails its calls with a `RayError`; Ray restarts it
(`ACTOR_RESTARTS`) and its files go back to the front of the queue, to another actor when one is alive.
A batch the engine raises on is run again inside the actor one job at a time (`ray_worker`), so a file
the engine cannot take fails alone. A file that has failed `MAX_ATTEMPTS` times is reported and left
untouched. Ctrl-C kills the actors; nothing is written, since writing starts only after every result.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import socket
import sys
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from infill.batch_fill import FailedFile, Outcome, new_tokens
from infill.files import BadInput
from infill.fill import FillJob, FillOptions, FillResult
from infill.progress import Progress
from remote.ray_worker import FillWorker, Hello

DEPTH = 2
MAX_ATTEMPTS = 2
ACTOR_RESTARTS = 3
PROBE_SECONDS = 5.0
MISSING = "--ray needs the ray package: pip install 'dcomplete[ray]'"


@dataclass(frozen=True)
class RayOptions:
    """address None: Ray's own default; actors / gpus_per_actor None: from the cluster's resources."""

    address: str | None
    actors: int | None
    gpus_per_actor: float | None
    model: str
    device: str | None


def ray_options(args: argparse.Namespace) -> RayOptions:
    if args.ray_actors is not None and args.ray_actors < 1:
        raise BadInput(f"--ray-actors {args.ray_actors}: must be at least 1")
    if args.ray_gpus_per_actor is not None and args.ray_gpus_per_actor < 0:
        raise BadInput(f"--ray-gpus-per-actor {args.ray_gpus_per_actor}: must be at least 0")
    address = args.ray or os.environ.get("DCOMPLETE_RAY_ADDRESS") or None
    model = os.path.abspath(args.model) if os.path.exists(args.model) else args.model  # actors have their own cwd
    return RayOptions(address, args.ray_actors, args.ray_gpus_per_actor, model, args.device)


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise BadInput(MISSING) from None
    return ray


@dataclass
class _Batch:
    indices: tuple[int, ...]
    avoid: int | None = None  # the actor it failed on


class RayFill:
    """A pool of `FillWorker` actors (the `Backend` of `infill.batch_fill`)."""

    def __init__(self, ray: Any, handles: list[Any], hellos: list[Hello], owns_connection: bool,
                 say: Callable[[str], None], stdout: Any) -> None:
        self.ray, self.handles, self.hellos = ray, handles, hellos
        self.owns_connection, self.say = owns_connection, say
        self.stdout = stdout

    @staticmethod
    def _guard_stdout() -> Any:
        """Ray's driver prints the cluster's error messages ("A worker died ...") on stdout, where the
        patch or the JSON goes: while connected, stdout is stderr; `close` gives it back."""
        stdout = sys.stdout
        sys.stdout = sys.stderr
        return stdout

    @classmethod
    def start(cls, options: RayOptions, params: Any, fill_options: FillOptions,
              say: Callable[[str], None]) -> RayFill:
        """Connect (unless this process already is), start the actors and wait until each has loaded
        the model; a model that cannot load is one line of BadInput."""
        ray = import_ray()
        owns = not ray.is_initialized()
        stdout = cls._guard_stdout()
        handles: list[Any] = []
        try:
            if owns:
                connect(ray, options.address)
            count, gpus = _pool_shape(ray, options)
            device = options.device or ("cuda" if gpus else None)
            worker = ray.remote(FillWorker).options(
                num_cpus=1, num_gpus=gpus, max_restarts=ACTOR_RESTARTS, max_task_retries=0
            )
            handles = [worker.remote(options.model, device, params, fill_options) for _ in range(count)]
            hellos = ray.get([handle.hello.remote() for handle in handles])
            errors = [hello.error for hello in hellos if hello.error]
            if errors:
                raise BadInput(errors[0])
        except BaseException:
            cls(ray, handles, [], owns, say, stdout).close()
            raise
        for number, hello in enumerate(hellos):
            say(f"ray: actor {number} on {hello.host} (pid {hello.pid}) loaded {hello.description}")
        return cls(ray, handles, hellos, owns, say, stdout)

    @property
    def tokenizer(self) -> Any:
        return self.hellos[0].tokenizer

    @property
    def max_length(self) -> int:
        return int(self.hellos[0].max_length)

    def fill(self, batches: Sequence[Sequence[FillJob]], progress: Progress) -> list[Outcome]:
        jobs = [job for batch in batches for job in batch]
        run = _Run(self, jobs, progress)
        first = 0
        for batch in batches:
            run.queue.append(_Batch(tuple(range(first, first + len(batch)))))
            first += len(batch)
        return run.finish()

    def close(self) -> None:
        """Stop every actor (their running calls with them), then leave the cluster."""
        for handle in self.handles:
            try:
                self.ray.kill(handle)
            except Exception:
                pass
        try:
            if self.owns_connection:
                self.ray.shutdown()
        finally:
            sys.stdout = self.stdout


class _Run:
    """One `fill`: the queue of batches, what each actor holds, and each file's failures."""

    def __init__(self, pool: RayFill, jobs: list[FillJob], progress: Progress) -> None:
        self.pool, self.ray, self.jobs, self.progress = pool, pool.ray, jobs, progress
        self.queue: deque[_Batch] = deque()
        self.outcomes: list[Outcome | None] = [None] * len(jobs)
        self.failures = [0] * len(jobs)
        actors = len(pool.handles)
        self.load = [0] * actors
        self.deaths = [0] * actors
        self.running: dict[Any, tuple[int, _Batch, int]] = {}  # ref -> (actor, batch, its deaths then)

    def alive(self, actor: int) -> bool:
        return self.deaths[actor] <= ACTOR_RESTARTS

    def finish(self) -> list[Outcome]:
        while self.queue or self.running:
            self._dispatch()
            if not self.running:
                self._give_up("no Ray actor is left alive")
                break
            done, _ = self.ray.wait(list(self.running), num_returns=1, timeout=1.0)
            for ref in done:
                self._collect(ref)
        return [outcome for outcome in self.outcomes if outcome is not None]

    def _dispatch(self) -> None:
        """Round robin: every actor gets a first call before any gets a second."""
        actors = [a for a in range(len(self.load)) if self.alive(a)]
        for depth in range(1, DEPTH + 1):
            for actor in actors:
                if self.load[actor] >= depth:
                    continue
                batch = self._next_for(actor, others=len(actors) > 1)
                if batch is None:
                    continue
                jobs = [self.jobs[i] for i in batch.indices]
                again = " (again)" if batch.avoid is not None else ""
                self.pool.say(f"ray: actor {actor} takes {', '.join(str(job.doc_id) for job in jobs)}{again}")
                ref = self.pool.handles[actor].fill.remote(jobs)
                self.running[ref] = (actor, batch, self.deaths[actor])
                self.load[actor] += 1

    def _next_for(self, actor: int, others: bool) -> _Batch | None:
        """The first queued batch that did not fail on this actor (any, when no other actor is alive)."""
        for batch in self.queue:
            if batch.avoid != actor or not others:
                self.queue.remove(batch)
                return batch
        return None

    def _collect(self, ref: Any) -> None:
        actor, batch, deaths = self.running.pop(ref)
        self.load[actor] -= 1
        try:
            results: list[Outcome] = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            if deaths == self.deaths[actor]:  # the calls it held when it died fail together: one death
                self.deaths[actor] += 1
            reason = first_line(exc)
            self.pool.say(f"ray: actor {actor} failed ({reason}); its {len(batch.indices)} files go back")
            results = [FailedFile(f"its Ray actor died: {reason}", 1)] * len(batch.indices)
        retry: list[int] = []
        for index, result in zip(batch.indices, results, strict=True):
            if isinstance(result, FillResult):
                self.outcomes[index] = result
                continue
            self.failures[index] += 1
            if self.failures[index] < MAX_ATTEMPTS:
                self.pool.say(f"ray: {self.jobs[index].doc_id}: {result.error}; trying again")
                retry.append(index)
            else:
                self.outcomes[index] = FailedFile(result.error, self.failures[index])
        if retry:
            self.queue.appendleft(_Batch(tuple(retry), avoid=actor))
        finished = [self.outcomes[i] for i in batch.indices if i not in retry]
        failed = sum(isinstance(o, FailedFile) for o in finished)
        self.progress.advance(len(finished), tokens=new_tokens([o for o in finished if o]), failed=failed)

    def _give_up(self, reason: str) -> None:
        for batch in self.queue:
            for index in batch.indices:
                self.outcomes[index] = FailedFile(reason, self.failures[index])
        self.queue.clear()


def connect(ray: Any, address: str | None) -> None:
    """Ray retries an address where nothing listens for minutes, so a plain host:port is probed first."""
    hostport = re.fullmatch(r"([\w.\-]+):(\d+)", address or "")
    if hostport:
        try:
            socket.create_connection((hostport[1], int(hostport[2])), timeout=PROBE_SECONDS).close()
        except OSError as exc:
            raise BadInput(f"--ray {address}: no Ray cluster answers there ({exc.strerror or exc})") from None
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                 configure_logging=True)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        raise BadInput(f"--ray {address or '(default)'}: cannot connect: {first_line(exc)}") from None


def _pool_shape(ray: Any, options: RayOptions) -> tuple[int, float]:
    """(actors, GPUs per actor): one actor per GPU when the cluster has GPUs, else one."""
    resources = ray.cluster_resources()
    cluster_gpus, cluster_cpus = resources.get("GPU", 0.0), resources.get("CPU", 0.0)
    gpus = options.gpus_per_actor if options.gpus_per_actor is not None else (1.0 if cluster_gpus else 0.0)
    count = options.actors or (max(1, int(cluster_gpus // gpus)) if gpus else 1)
    if count * gpus > cluster_gpus or count > cluster_cpus:
        print(f"dcomplete: ray: {count} actors need {count:g} CPUs and {count * gpus:g} GPUs; the cluster has"
            f" {cluster_cpus:g} and {cluster_gpus:g} now (waiting for it to grow)",
              file=sys.stderr)
    return count, gpus


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0][:300]
