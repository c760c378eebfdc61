"""The whole infill path: text and spots -> canvas -> engine -> post-processing -> edits.

All spots of one document share one canvas (one denoising run); several documents given to
`fill_many` go to the engine as one batch. A result that breaks the parse (`infill.repair`) is revised
and denoised again, at most `FillOptions.retries` times: re-masked around the first new error, or, for an
engine that writes left to right, re-decoded from the first offending token with what it wrote there
banned (`infill.bans`). A result that parses but no longer defines a name the code after it reads
(`infill.scope`) counts as one that breaks the parse, at the end of its text. The attempt with the fewest
added errors wins, and `infill.settle` cuts back or drops whatever of it still breaks the parse, unless
`keep_invalid` is set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from infill.fill_document import DocumentFill
from infill.fill_types import FillJob, FillOptions, FillResult
from infill.languages import LanguageSpec
from infill.spots import Spot

if TYPE_CHECKING:
    from engine import DenoiseParams
    from engine.api import EngineLike

__all__ = ["FillJob", "FillOptions", "FillResult", "fill", "fill_many", "warm"]


def fill_many(
    engine: EngineLike,
    jobs: Sequence[FillJob],
    params: DenoiseParams | None = None,
    cancel: Callable[[], bool] | None = None,
    options: FillOptions = FillOptions(),
) -> list[FillResult]:
    """Fill every job's spots; one engine batch per round (first fill, then each re-mask round).

    A job without spots gets an empty result and costs nothing.
    """
    from engine import Stats

    documents = [DocumentFill(job, engine, options) for job in jobs if job.spots]
    if documents:
        results = engine.infill([d.first_request() for d in documents], params, cancel=cancel)
        for document, result in zip(documents, results):
            document.absorb(result)
    for _ in range(options.retries):
        pending = [d for d in documents if d.wants_retry()]
        if not pending:
            break
        results = engine.infill([d.retry_request() for d in pending], params, cancel=cancel)
        for document, result in zip(pending, results):
            document.absorb(result)
    finished = iter(d.result() for d in documents)
    return [next(finished) if job.spots else FillResult([], [], Stats(), attempts=0) for job in jobs]


def warm(engine: EngineLike, job: FillJob, params: DenoiseParams | None = None,
         options: FillOptions = FillOptions()) -> bool:
    """Have the engine compute the fixed text of the canvas `fill` would build for `job` (and keep it for
    `job.doc_id`) without filling anything, so the next fill of that document runs only what changed;
    whether the engine kept anything."""
    if not job.spots or job.doc_id is None:
        return False
    return engine.warm([DocumentFill(job, engine, options).first_request()], params)


def fill(
    engine: EngineLike,
    text: str,
    spots: Sequence[Spot],
    params: DenoiseParams | None = None,
    language: str | LanguageSpec = "python",
    doc_id: str | None = None,
    cancel: Callable[[], bool] | None = None,
    options: FillOptions = FillOptions(),
) -> FillResult:
    """Fill `spots` of `text` in one canvas; see ARCHITECTURE.md (infill)."""
    return fill_many(engine, [FillJob(text, tuple(spots), language, doc_id)], params, cancel, options)[0]
