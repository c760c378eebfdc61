"""The body of one Ray actor of `dcomplete refactor --ray`: it loads the engine once and fills batches
of jobs with `fill_many`, exactly as the local path does. It is a plain class (no ray import), made an
actor by `remote.ray_refactor`, so its module is what the workers import."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infill.batch_fill import FailedFile, Outcome
from infill.fill import FillJob, FillOptions, fill_many


@dataclass(frozen=True)
class Hello:
    """What an actor says once its engine is loaded (or could not be): the driver plans spots with the
    tokenizer, so the model files only need to exist where the actors run."""

    pid: int
    host: str
    error: str | None
    tokenizer: Any = None
    description: str = ""
    max_length: int = 0


class FillWorker:
    def __init__(self, model: str, device: str | None, params: Any, options: FillOptions) -> None:
        from engine import ModelLoadError
        from remote.engines import open_engine

        self.params, self.options = params, options
        self.engine: Any = None
        self.error: str | None = None
        try:
            self.engine = open_engine(model, device, serving=True)
        except ModelLoadError as exc:
            self.error = str(exc)

    def hello(self) -> Hello:
        host = socket.gethostname()
        if self.engine is None:
            return Hello(os.getpid(), host, self.error)
        e = self.engine
        return Hello(os.getpid(), host, None, e.tokenizer, f"{e.name} ({e.family}, {e.device})", e.max_length)

    def fill(self, jobs: Sequence[FillJob]) -> list[Outcome]:
        """One outcome per job. When the batch raises, each job is run alone, so that one file the engine
        cannot take costs only its own result."""
        try:
            return list(fill_many(self.engine, jobs, self.params, options=self.options))
        except Exception as exc:
            if len(jobs) == 1:
                return [FailedFile(f"{exc.__class__.__name__}: {exc}", 1)]
        return [outcome for job in jobs for outcome in self.fill([job])]
