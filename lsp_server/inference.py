"""The server's only door to the model: loads the engine and calls `infill` on the worker thread.

Every method here blocks and must run on the scheduler's worker (see scheduler.py); nothing here
knows LSP. Results come back as `Replacement`s (str offsets into the text that was passed in).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .settings import Settings

logger = logging.getLogger(__name__)
CancelCheck = Callable[[], bool]


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


@dataclass(frozen=True)
class LoadFailure:
    spec: str
    message: str


class ModelUnavailable(RuntimeError):
    """The model failed to load; requests answer empty until the settings change."""


class InferenceBackend:
    def __init__(self) -> None:
        self._engine: Any = None
        self._loaded_key: tuple[str, str] | None = None
        self.failure: LoadFailure | None = None
        self.device_name = "none"

    @property
    def loaded(self) -> bool:
        return self._engine is not None

    def ensure_loaded(self, settings: Settings) -> LoadFailure | None:
        """Load (or reload) the engine the settings ask for; a failure is returned, never raised."""
        key = (settings.model, settings.device)
        if key == self._loaded_key:
            return self.failure
        self._engine, self._loaded_key, self.failure = None, key, None
        started = time.perf_counter()
        try:
            from engine import Engine

            self._engine = Engine.load(spec=settings.model, device=settings.engine_device)
        except Exception as error:  # a broken checkpoint must not take the server down
            logger.exception("loading model %s failed", settings.model)
            self.failure = LoadFailure(settings.model, f"{type(error).__name__}: {error}")
            self.device_name = "none"
            return self.failure
        self.device_name = str(getattr(self._engine, "device", settings.device))
        logger.info("loaded model %s on %s in %.1fs", settings.model, self.device_name,
                    time.perf_counter() - started)
        return None

    def forget(self, doc_id: str) -> None:
        """Drop the engine's cached keys/values of a closed document."""
        if self._engine is not None:
            self._engine.forget(doc_id)

    def _require_engine(self) -> Any:
        if self._engine is None:
            raise ModelUnavailable(self.failure.message if self.failure else "model not loaded")
        return self._engine

    def _params(self, settings: Settings, seed: int = 0, temperature: float = 0.0) -> Any:
        """`steps` 0: commit by confidence threshold (fast); N: the family's own schedule over N steps."""
        from engine import DenoiseParams

        if settings.steps:
            return DenoiseParams(steps=settings.steps, rule="reference", temperature=temperature, seed=seed)
        return DenoiseParams(rule="threshold", threshold=settings.threshold, temperature=temperature, seed=seed)

    def _fill(self, text: str, spots: list[Any], settings: Settings, language: str, doc_id: str | None,
              cancel: CancelCheck, seed: int = 0, temperature: float = 0.0) -> Outcome:
        import infill

        started = time.perf_counter()
        spots = [_capped(spot, settings.max_tokens) for spot in spots]
        result = infill.fill(self._require_engine(), text, spots, self._params(settings, seed, temperature),
                             language=language, doc_id=doc_id, cancel=cancel)
        replacements = [Replacement(e.start, e.end, e.new_text) for e in result.edits]
        return Outcome(replacements, bool(result.cancelled), time.perf_counter() - started)

    def complete(self, text: str, offset: int, settings: Settings, language: str, doc_id: str,
                 alternatives: int, cancel: CancelCheck) -> Outcome:
        """Up to `alternatives` different completions at `offset` (greedy first, then other lengths
        and seeds), deduplicated; an empty outcome when there is nothing to complete there."""
        import infill

        self._require_engine()
        started = time.perf_counter()
        spot = infill.plan_completion(text, offset, language=language)
        if spot is None:
            return Outcome([])
        variants = [(spot, 0, 0.0), (_resized(spot, 2.0), 0, 0.0), (spot, 1, 0.7), (spot, 2, 0.7)]
        found: list[Replacement] = []
        for variant, seed, temperature in variants[: max(1, alternatives) + 1]:
            if len(found) >= alternatives or cancel():
                break
            outcome = self._fill(text, [variant], settings, language, doc_id, cancel, seed, temperature)
            if outcome.cancelled:
                return Outcome(found, True, time.perf_counter() - started)
            for replacement in outcome.replacements:
                if replacement not in found:
                    found.append(replacement)
        return Outcome(found[:alternatives], False, time.perf_counter() - started)

    def regenerate(self, text: str, start_line: int, end_line: int, settings: Settings, language: str,
                   doc_id: str, cancel: CancelCheck) -> Outcome:
        import infill

        self._require_engine()
        spot = infill.plan_regenerate(text, start_line, end_line, language)
        return self._fill(text, [spot], settings, language, doc_id, cancel)

    def fill_holes(self, text: str, settings: Settings, language: str, doc_id: str,
                   cancel: CancelCheck) -> Outcome:
        import infill

        self._require_engine()
        spots = list(infill.plan_holes(text, language=language))
        if not spots:
            return Outcome([])
        return self._fill(text, spots, settings, language, doc_id, cancel)

    def refactor(self, text: str, start_line: int, end_line: int, instruction: str, settings: Settings,
                 language: str, doc_id: str, cancel: CancelCheck) -> Outcome:
        """Regenerate the lines under an instruction comment placed just above them; the comment
        steers the model and is not part of the edit."""
        import infill

        self._require_engine()
        lines = text.splitlines(keepends=True)
        first = lines[start_line - 1] if 0 < start_line <= len(lines) else ""
        indent = first[: len(first) - len(first.lstrip(" \t"))]
        comment = f"{indent}# Instruction: {' '.join(instruction.split())}\n"
        at = sum(len(line) for line in lines[: start_line - 1])
        steered = text[:at] + comment + text[at:]
        spot = infill.plan_regenerate(steered, start_line + 1, end_line + 1, language)
        outcome = self._fill(steered, [spot], settings, language, None, cancel)
        shift = len(comment)
        moved = [Replacement(r.start - shift, r.end - shift, r.new_text) for r in outcome.replacements
                 if r.start >= at + shift]
        return Outcome(moved, outcome.cancelled, outcome.seconds)


def _capped(spot: Any, max_tokens: int) -> Any:
    if getattr(spot, "n_masks", 0) > max_tokens:
        return dataclasses.replace(spot, n_masks=max_tokens)
    return spot


def _resized(spot: Any, factor: float) -> Any:
    return dataclasses.replace(spot, n_masks=max(1, int(spot.n_masks * factor)))
