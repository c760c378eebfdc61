"""The server's only door to the model: loads the engine and calls `infill` on the worker thread.

Every method here blocks and must run on the scheduler's worker (see scheduler.py); nothing here
knows LSP. Results come back as `Replacement`s (str offsets into the text that was passed in).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from . import faults
from .settings import Settings

if TYPE_CHECKING:
    from infill.languages import LanguageSpec
    from infill.next_edit.edits import DocEdit
    from infill.next_edit.suggest import NextEdit
    from infill.spots import Spot

    from .documents import Document
    from .repo_context import ContextSource

logger = logging.getLogger(__name__)
CancelCheck = Callable[[], bool]
T = TypeVar("T")


@dataclass(frozen=True)
class Replacement:
    """Replace `text[start:end]` with `new_text` (offsets in code points)."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class Outcome:
    replacements: list[Replacement]
    cancelled: bool = False
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    """Why spots got no edit, or doubts about a range (from infill), for the user."""


@dataclass(frozen=True)
class LoadFailure:
    spec: str
    message: str
    remote: bool = False
    """The engine server is unreachable or failed: tried again at a later request, not only when the
    settings change."""


class ModelUnavailable(RuntimeError):
    """The model failed to load; requests answer empty until the settings change."""


RECONNECT_SECONDS = 2.0
"""How long requests answer empty after the engine server failed before one tries to reach it again."""
SAMPLED_TEMPERATURE = 0.8  # an invoked completion's sampled alternatives


class InferenceBackend:
    def __init__(self) -> None:
        self._engine: Any = None
        self._loaded_key: tuple[str, ...] | None = None
        self._retry_at = 0.0
        self.failure: LoadFailure | None = None
        self.device_name = "none"
        self.model_name = "none"
        self.runs = 0
        """Denoising runs so far (a request that needs no model, such as one mid-word, runs none)."""
        self._said_no_next_edits = False


    @property
    def loaded(self) -> bool:
        return self._engine is not None

    @property
    def calibrating(self) -> bool:
        """Whether the local engine still measures this machine's kernels (`calibrate_step` runs a piece)."""
        return bool(getattr(self._engine, "calibrating", False))

    def calibrate_step(self) -> bool:
        """One piece of the engine's measurement of this machine's kernels; whether pieces remain."""
        return bool(self._engine is not None and self._engine.calibrate_step())

    def ensure_loaded(self, settings: Settings) -> LoadFailure | None:
        """Load (or reload, or reconnect to) the engine the settings ask for; a failure is returned,
        never raised. A local model that failed stays failed until the settings change; an engine
        server is tried again once `RECONNECT_SECONDS` have passed."""
        key = settings.engine_key
        retry = self.failure is not None and self.failure.remote and time.monotonic() >= self._retry_at
        if key == self._loaded_key and not retry:
            return self.failure
        self._engine, self._loaded_key, self.failure = None, key, None
        started = time.perf_counter()
        try:
            self._engine = _open_engine(settings)
        except Exception as error:  # a broken checkpoint or a dead server must not take the server down
            return self._failed(settings, error)
        self.device_name = str(getattr(self._engine, "device", settings.device))
        self.model_name = str(getattr(self._engine, "name", settings.model))
        logger.info(
            "loaded model %s on %s in %.1fs", self.model_name, self.device_name, time.perf_counter() - started
        )
        return None

    def run(self, settings: Settings, work: Callable[[CancelCheck], T], cancel: CancelCheck) -> T | LoadFailure:
        """`work` with the engine loaded; an engine server that fails mid-request is a failure too."""
        from remote.client import EngineUnavailable

        failure = self.ensure_loaded(settings)
        if failure is not None:
            return failure
        try:
            return work(cancel)
        except EngineUnavailable as error:
            return self._failed(settings, error)

    def _failed(self, settings: Settings, error: Exception) -> LoadFailure:
        """Called in an `except` block: a local load failure is logged with its traceback."""
        if settings.engine_url:
            logger.warning("%s", error)
            self.failure = LoadFailure(settings.engine_url, str(error), remote=True)
            self._retry_at = time.monotonic() + RECONNECT_SECONDS
        else:
            logger.exception("loading model %s failed", settings.model)
            self.failure = LoadFailure(settings.model, f"{type(error).__name__}: {error}")
        self._engine, self.device_name, self.model_name = None, "none", "none"
        return self.failure

    def forget(self, doc_id: str) -> None:
        """Drop the engine's cached keys/values of a closed document."""
        if self._engine is not None:
            self._engine.forget(doc_id)

    def _require_engine(self) -> Any:
        if self._engine is None:
            raise ModelUnavailable(self.failure.message if self.failure else "model not loaded")
        return self._engine

    def params(self, settings: Settings, seed: int = 0, temperature: float = 0.0) -> Any:
        """`steps` 0: commit by confidence threshold (fast); N: the family's own schedule over N steps (with
        the fixed-text cache of the fast preset)."""
        from infill.user_settings import denoise_params

        if settings.steps:
            return denoise_params(steps=settings.steps, rule="reference", temperature=temperature, seed=seed)
        return denoise_params(threshold=settings.threshold, block=settings.block, temperature=temperature, seed=seed)

    def _fill(
        self,
        jobs: list[tuple[str, list[Any], str | None]],
        settings: Settings,
        language: str | LanguageSpec,
        cancel: CancelCheck,
        seed: int = 0,
        temperature: float = 0.0,
        instruction: str | None = None,
        context: str = "",
        first_statement: bool = False,
        deadline_ms: int | None = None,
    ) -> list[Outcome]:
        """Fill several (text, spots, doc_id) jobs in one engine batch, `context` (code from other files)
        above each.

        `maxTokens` caps each spot's masks; for one-spot jobs it also caps how far the engine may grow
        a span that ran out of room (multi-spot jobs keep infill's per-spot growth)."""
        import infill

        started = time.perf_counter()
        prepared, options = fill_jobs(jobs, settings, language, instruction, context, first_statement, deadline_ms)
        engine = self._require_engine()
        if not settings.engine_url:  # an engine server keeps its documents under its own budget
            engine.doc_cache.set_budget(settings.cache_mb << 20)
        self.runs += 1
        results = infill.fill_many(
            engine,
            prepared,
            self.params(settings, seed, temperature),
            cancel=cancel,
            options=options,
        )
        seconds = time.perf_counter() - started
        return [
            Outcome(
                [Replacement(e.start, e.end, e.new_text) for e in result.edits],
                bool(result.cancelled),
                seconds,
                tuple(result.notes),
            )
            for result in results
        ]

    def _fill_one(
        self,
        text: str,
        spots: list[Any],
        settings: Settings,
        language: str | LanguageSpec,
        doc_id: str | None,
        cancel: CancelCheck,
        instruction: str | None = None,
        context: ContextSource | None = None,
    ) -> Outcome:
        """One document's spots in one canvas, the project's context built at its first spot."""
        header = _header(context, self._require_engine(), spots[0].start)
        return self._fill([(text, spots, doc_id)], settings, language, cancel, instruction=instruction,
                          context=header)[0]

    def complete(
        self,
        text: str,
        spot: Spot,
        settings: Settings,
        language: str | LanguageSpec,
        doc_id: str,
        alternatives: int,
        cancel: CancelCheck,
        context: ContextSource | None = None,
        automatic: bool = False,
    ) -> Outcome:
        """Up to `alternatives` different completions of `spot` (`infill.plan_completion`'s), deduplicated.
        The first is greedy at the planned length; alternatives come from other lengths (one batch; not for
        an engine that writes left to right, where the mask count does not decide the length), then, when
        those are not enough, from sampling (a second batch, one row per alternative). Every row names the
        document, so each starts from its kept keys. An `automatic` trigger's completion stops after its
        first statement when the settings say so (`automaticUntil`)."""
        engine = self._require_engine()
        started = time.perf_counter()
        header = _header(context, engine, spot.start)
        first = automatic and settings.automatic_until == "statement"
        deadline = settings.automatic_ms if automatic and settings.automatic_ms else None
        lengths = [spot]
        if alternatives > 1 and not engine.left_to_right:
            lengths = [spot, _resized(spot, 2.0), _resized(spot, 0.5)]
        found: list[Replacement] = []
        for sampled in (False, True):
            wanted = alternatives - len(found)
            if sampled and (alternatives == 1 or wanted <= 0):
                break
            variants, seed, temperature = ([spot] * wanted, 1, SAMPLED_TEMPERATURE) if sampled else (lengths, 0, 0.0)
            jobs: list[tuple[str, list[Any], str | None]] = [(text, [variant], doc_id) for variant in variants]
            for outcome in self._fill(jobs, settings, language, cancel, seed, temperature, context=header,
                                      first_statement=first, deadline_ms=deadline):
                if outcome.cancelled:
                    return Outcome(found, True, time.perf_counter() - started)
                found.extend(r for r in outcome.replacements if r not in found)
        return Outcome(found[:alternatives], False, time.perf_counter() - started)

    def warm(self, text: str, offset: int, settings: Settings, language: str, doc_id: str,
             context: ContextSource | None = None) -> bool:
        """Prefill the canvas of a completion at `offset` for the document, so that its first suggestion
        pays only for what changes and the gap (called while the user reads a file they just opened)."""
        import infill

        engine = self._require_engine()
        try:
            spot = infill.plan_completion(text, offset, language=language)
        except infill.languages.UnsupportedLanguage:
            return False
        if spot is None:
            return False
        (job,), options = fill_jobs([(text, [spot], doc_id)], settings, language,
                                    context=_header(context, engine, spot.start))
        return infill.warm(engine, job, self.params(settings), options)

    def regenerate(
        self,
        text: str,
        start_line: int,
        end_line: int,
        settings: Settings,
        language: str | LanguageSpec,
        doc_id: str,
        cancel: CancelCheck,
        instruction: str | None = None,
        context: ContextSource | None = None,
    ) -> Outcome:
        """Regenerate whole lines; an instruction goes into the context as a comment block."""
        import infill

        engine = self._require_engine()
        spot = infill.plan_regenerate(text, start_line, end_line, language, tokenizer=engine.tokenizer)
        outcome = self._fill_one(text, [spot], settings, language, doc_id, cancel, instruction, context)
        if spot.warning:
            return dataclasses.replace(outcome, notes=(spot.warning, *outcome.notes))
        return outcome

    def fill_holes(
        self, text: str, settings: Settings, language: str | LanguageSpec, doc_id: str, cancel: CancelCheck,
        context: ContextSource | None = None,
    ) -> Outcome:
        """Every hole marker of the file in one canvas."""
        import infill

        self._require_engine()
        spots = infill.find_holes(text, language)
        if not spots:
            return Outcome([])
        return self._fill_one(text, spots, settings, language, doc_id, cancel, context=context)


    def next_edits(self, document: Document, others: list[Document], history: list[DocEdit], settings: Settings,
                   cancel: CancelCheck, context: ContextSource | None = None) -> list[NextEdit]:
        """The next edits after the newest edit of `document` in `history` (`infill.next_edit`), best first;
        none from a model that cannot read the text after a gap (a block-diffusion checkpoint), which the
        log says once."""
        from infill.next_edit.suggest import NOT_IN_PLACE, NextEditSettings, OpenDocument, in_place, suggest

        engine = self._require_engine()
        if not in_place(engine):
            if not self._said_no_next_edits:
                self._said_no_next_edits = True
                logger.warning("next edits: model %s %s; it gives no next edits", self.model_name, NOT_IN_PLACE)
            return []
        if not settings.engine_url:
            engine.doc_cache.set_budget(settings.cache_mb << 20)
        self.runs += 1
        mine = history[-1] if history else None
        header = _header(context, engine, mine.start if mine is not None else 0)
        return suggest(engine, OpenDocument(document.uri, document.text, document.language),
                       history, self.params(settings), NextEditSettings(settings.next_edit.aggressiveness),
                       [OpenDocument(d.uri, d.text, d.language) for d in others], cancel, header)


def _open_engine(settings: Settings) -> Any:
    from remote.engines import open_engine

    keep = os.environ.get("DCOMPLETE_KEEP_DOCUMENTS", "on") != "off"  # a restart's first suggestions skip the prefill
    engine = open_engine(settings.model, settings.engine_device, settings.engine_url, settings.engine_api_key,
                         keep_documents=keep, serving=True)
    return faults.wrap(engine)


def _resized(spot: Any, factor: float) -> Any:
    return dataclasses.replace(spot, n_masks=max(1, int(spot.n_masks * factor)))


def _header(context: ContextSource | None, engine: Any, offset: int) -> str:
    return context(engine, offset) if context is not None else ""


def fill_jobs(jobs: list[tuple[str, list[Any], str | None]], settings: Settings, language: str | LanguageSpec,
               instruction: str | None = None, context: str = "", first_statement: bool = False,
               deadline_ms: int | None = None) -> tuple[list[Any], Any]:
    """The `infill.FillJob`s and `FillOptions` of (text, spots, doc_id) jobs under the settings' token cap:
    what a fill sends, and what a warm-up must build to prefill the same canvas."""
    import infill
    from infill.user_settings import cap_tokens

    capped, max_grow = cap_tokens([spots for _, spots, _ in jobs], settings.max_tokens)
    made = [infill.FillJob(text, spots, language, doc_id) for (text, _, doc_id), spots in zip(jobs, capped)]
    return made, infill.FillOptions(instruction=instruction, max_grow=max_grow, context=context,
                                    first_statement=first_statement, line_deadline_ms=deadline_ms)
