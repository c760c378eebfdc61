"""The whole infill path: text and spots -> canvas -> engine -> post-processing -> edits.

All spots of one document share one canvas (one denoising run); several documents given to
`fill_many` go to the engine as one batch. A result that adds parse errors is re-masked around the
first new error and denoised again, at most `FillOptions.retries` times (never for a left-to-right
engine decoding greedily, which would write the same again); the attempt with the fewest added errors
wins, and a spot whose best result still breaks the syntax gets no edit unless `keep_invalid` is set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from infill.canvas import Canvas, ContextOverflow, canvas_for, check_spots, instruction_header, line_break_ids
from infill.languages import LanguageSpec, get_language
from infill.leads import TextLead
from infill.postprocess import decode, drop_reason, finish, span_ids, token_offsets
from infill.repair import Baseline, ParseCheck, baseline, check_filled, remask_range
from infill.span_end import TextEnd
from infill.spots import Edit, Spot

if TYPE_CHECKING:
    from engine import DenoiseParams, InfillRequest, InfillResult, Stats
    from engine.api import EngineLike

GROW_PER_SPOT = {"line": 8, "block": 32}


@dataclass(frozen=True)
class FillOptions:
    """retries: re-mask rounds after a result that adds parse errors; keep_invalid: keep the best
    result even when it still adds errors; max_grow: tokens the engine may add to a document's spans
    (None: GROW_PER_SPOT per spot); instruction: a comment block put at the top of the context;
    heal: False keeps gaps at the raw cursor for an engine that writes left to right (to measure what
    healed token boundaries are worth; `infill.leads`)."""

    retries: int = 2
    keep_invalid: bool = False
    max_grow: int | None = None
    instruction: str | None = None
    heal: bool = True


@dataclass(frozen=True)
class FillJob:
    text: str
    spots: tuple[Spot, ...]
    language: str | LanguageSpec = "python"
    doc_id: str | None = None


@dataclass
class FillResult:
    edits: list[Edit]
    canvas_ids: list[int]
    stats: Stats
    cancelled: bool = False
    notes: list[str] = field(default_factory=list)
    attempts: int = 1


@dataclass
class _Attempt:
    edits: list[Edit | None]
    raws: list[Any]
    check: ParseCheck
    dropped: list[str]


class _Document:
    """One job through its attempts."""

    def __init__(self, job: FillJob, engine: EngineLike, options: FillOptions) -> None:
        self.job = job
        self.engine = engine
        self.options = options
        self.spec = get_language(job.language)
        spots = check_spots(job.spots, len(job.text))
        grow = options.max_grow
        if grow is None:
            grow = sum(GROW_PER_SPOT[s.kind] for s in spots)
        header = instruction_header(options.instruction, self.spec.comment_prefix)
        self.max_grow = grow
        try:
            self.canvas: Canvas = self._build(spots, header, reserve=grow)
        except ContextOverflow:
            self.canvas = self._build(spots, header, reserve=0)
            self.max_grow = max(0, engine.max_length - len(self.canvas.ids))
        self.baseline: Baseline = baseline(job.text, self.spec)
        from engine import Stats  # engine (torch) loads only when a fill runs

        self.stats: Stats = Stats()
        self.cancelled = False
        self.current: list[int] = []
        self.positions: list[tuple[int, int]] = []
        self.attempts: list[_Attempt] = []
        self.notes: list[str] = []

    def _build(self, spots: list[Spot], header: str, reserve: int) -> Canvas:
        """The canvas, with `reserve` tokens of the context kept free for span growth (distant
        context lines give way to growth room)."""
        return canvas_for(self.engine, self.job.text, spots, header=header, reserve=reserve, heal=self.options.heal)

    def _span_stops(self) -> tuple[frozenset[int], ...]:
        """A one-line insertion keeps only its first line (`shape_text`), so a line break ends it."""
        breaks = line_break_ids(self.engine.tokenizer)
        return tuple(
            breaks if slot.spot.kind == "line" and slot.spot.start == slot.spot.end else frozenset()
            for slot in self.canvas.slots
        )

    def _span_leads(self) -> tuple[TextLead | None, ...]:
        if not self.engine.left_to_right or not self.options.heal:
            return ()
        return tuple(TextLead(slot.lead, self.engine.tokenizer) if slot.lead else None for slot in self.canvas.slots)

    def _span_ends(self) -> tuple[TextEnd, ...]:
        if not self.engine.left_to_right:
            return ()
        return tuple(TextEnd(slot, self.job.text, self.spec, self.engine.tokenizer) for slot in self.canvas.slots)

    def first_request(self) -> InfillRequest:
        from engine import InfillRequest

        return InfillRequest(list(self.canvas.ids), self.job.doc_id, self.max_grow, self._span_stops(),
                             self._span_leads(), self._span_ends())

    def absorb(self, result: InfillResult) -> None:
        self.stats = self.stats.add(result.stats)
        self.cancelled = self.cancelled or result.cancelled
        self.current = list(result.canvas)
        if not self.positions:
            if len(result.spans) != len(self.canvas.slots):
                raise RuntimeError(
                    f"the engine returned {len(result.spans)} spans for {len(self.canvas.slots)} spots"
                )
            self.positions = [(span.start, span.end) for span in result.spans]
        if not self.cancelled:
            self.attempts.append(self._evaluate())

    def _evaluate(self) -> _Attempt:
        text, special, tokenizer = self.job.text, self.engine.special, self.engine.tokenizer
        edits: list[Edit | None] = []
        raws = []
        dropped = []
        for slot, (start, end) in zip(self.canvas.slots, self.positions):
            kept = span_ids(self.current[start:end], special)
            shaped, new_text = finish(decode(tokenizer, kept), slot, text, self.spec)
            spot = slot.spot
            reason = drop_reason(new_text, text, spot.end, spot.start if spot.start == spot.end else None)
            raws.append((kept, shaped))
            if reason is not None or new_text == text[spot.start : spot.end]:
                dropped.append(f"spot at offset {spot.start}: {reason or 'the result equals the original'}")
                edits.append(None)
                continue
            edits.append(Edit(spot.start, spot.end, new_text, tuple(kept)))
        return _Attempt(edits, raws, check_filled(text, edits, self.baseline, self.spec), dropped)

    def wants_retry(self) -> bool:
        if self.cancelled or not self.attempts:
            return False
        last = self.attempts[-1]
        return last.check.added > 0 and any(w is not None for w in last.check.where)

    def retry_request(self) -> InfillRequest:
        last = self.attempts[-1]
        canvas = list(self.current)
        for (start, end), (kept, shaped), where in zip(self.positions, last.raws, last.check.where):
            if where is None:
                continue
            offsets = token_offsets(self.engine.tokenizer, kept)
            lo, hi = remask_range(offsets, end - start, shaped.raw, shaped.raw_offset(where))
            if self.engine.left_to_right:
                hi = end - start  # such a model revises a span's tail, never text it wrote before
            canvas[start + lo : start + hi] = [self.engine.special.mask_id] * (hi - lo)
        from engine import InfillRequest

        return InfillRequest(canvas, self.job.doc_id, 0, self._span_stops(), self._span_leads(), self._span_ends())

    def result(self) -> FillResult:
        canvas_ids = list(self.canvas.ids)
        if not self.attempts:
            return FillResult([], canvas_ids, self.stats, True, ["cancelled"], 0)
        best = min(self.attempts, key=lambda a: a.check.added)
        edits = list(best.edits)
        self.notes.extend(best.dropped)
        if not self.spec.has_grammar and any(edits):
            self.notes.append(f"no parse check ran ({self.spec.id}: no grammar for this language)")
        if best.check.added > 0 and not self.options.keep_invalid:
            blamed = [i for i, w in enumerate(best.check.where) if w is not None] or list(range(len(edits)))
            for index in blamed:
                edit = edits[index]
                if edit is not None:
                    self.notes.append(f"spot at offset {edit.start}: dropped, the result does not parse")
                    edits[index] = None
        return FillResult(
            [e for e in edits if e is not None],
            canvas_ids,
            self.stats,
            self.cancelled,
            self.notes,
            len(self.attempts),
        )


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

    documents = [_Document(job, engine, options) for job in jobs if job.spots]
    if documents:
        results = engine.infill([d.first_request() for d in documents], params, cancel=cancel)
        for document, result in zip(documents, results):
            document.absorb(result)
    retries = options.retries
    if engine.left_to_right and (params is None or params.temperature == 0):
        retries = 0  # re-masking a greedy left-to-right span's tail writes the same tail again
    for _ in range(retries):
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
    return engine.warm([_Document(job, engine, options).first_request()], params)


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
