"""Where `dcomplete refactor` sends its batches: one engine in this process, or a pool of Ray actors
(`remote.ray_refactor`). Both take the same batches of `FillJob`s, in the same order, and give back one
outcome per job; everything around them (planning, output, atomic writes, `--check`, rollback) is one
code path in `cli.refactor_command`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from infill.fill import FillJob, FillOptions, FillResult, fill_many
from infill.progress import Progress

if TYPE_CHECKING:
    from engine import DenoiseParams
    from engine.api import EngineLike


@dataclass(frozen=True)
class FailedFile:
    """A job that could not be filled (an engine error, or its actor died, on every attempt); its file is
    left untouched."""

    error: str
    attempts: int


Outcome = FillResult | FailedFile


class Backend(Protocol):
    @property
    def tokenizer(self) -> Any: ...

    @property
    def max_length(self) -> int:
        """Canvas tokens the engine takes (what a context header may use part of)."""
        ...

    def fill(self, batches: Sequence[Sequence[FillJob]], progress: Progress) -> list[Outcome]: ...

    def close(self) -> None: ...


def batches_of(jobs: Sequence[FillJob], size: int) -> list[list[FillJob]]:
    return [list(jobs[first : first + size]) for first in range(0, len(jobs), size)]


def new_tokens(outcomes: Sequence[Outcome]) -> int:
    return sum(o.stats.new_tokens for o in outcomes if isinstance(o, FillResult))


class LocalFill:
    """One engine in this process: each batch is one `fill_many` call."""

    def __init__(self, engine: EngineLike, params: DenoiseParams | None, options: FillOptions,
                 say: Callable[[str], None]) -> None:
        self.engine, self.params, self.options, self.say = engine, params, options, say

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    @property
    def max_length(self) -> int:
        return self.engine.max_length

    def fill(self, batches: Sequence[Sequence[FillJob]], progress: Progress) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for batch in batches:
            self.say(f"denoising {sum(len(job.spots) for job in batch)} spots in {len(batch)} files")
            results = fill_many(self.engine, batch, self.params, options=self.options)
            outcomes.extend(results)
            progress.advance(len(batch), tokens=new_tokens(results))
        return outcomes

    def close(self) -> None:
        pass
