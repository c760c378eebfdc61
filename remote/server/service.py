"""What the endpoints do, on plain values: every text endpoint reduces to a `TextJob` that goes through
`infill` exactly as `dcomplete infill FILE:LINE` does (plan_completion at the cursor, fill_many, the same
post-processing), and the native endpoint's two forms become `fill` calls or engine rows.

Runs in the server's request threads; `engine` is the shared `engine.batcher.Batcher`, so the engine
calls these make join other requests' batches. Bad input raises `RequestError` with a sentence naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from engine import DenoiseParams, InfillRequest, InfillResult, Stats
from infill import user_settings
from infill.canvas import ContextOverflow, Slot
from infill.context import Chunk
from infill.fill import FillJob, FillOptions, FillResult, fill_many
from infill.languages import LanguageSpec, UnsupportedLanguage, get_language
from infill.leads import TextLead
from infill.line_deadline import LineDeadline
from infill.span_end import TextEnd
from infill.spots import Spot
from infill.tickets import Ticket
from infill.windows import plan_completion
from remote.server import schemas
from remote.server.bounds import char_budget, cut_prompt, lead_writable
from remote.server.extra_context import client_chunks, extra_header


class RequestError(Exception):
    """Bad input: an HTTP status and one sentence naming the field."""

    def __init__(self, message: str, status: int = 400, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message, self.status, self.kind = message, status, kind


MIN_TEMPERATURE, MAX_TEMPERATURE = 1e-30, 1e30
"""Beyond them the logits divided by the temperature (in float32) overflow or the temperature itself does:
NaN probabilities, which would fail every row of the batch. Sampling at 1e30 is already uniform."""
PARAM_LIMITS = {"steps": 65_536, "block": 2**63 - 1}
"""Beyond them a param holds or fails the engine: Dream's reference schedule builds a table of `steps` + 1
floats for every row at every step (10^9 steps: 4 GB each time) and 10^9 steps never end; a `block` past
int64 loops forever (Dream) or fails the batch (anchored). The language server's tests ask for 4,096 steps."""
SEEDS = (-(2**63), 2**64 - 1)
"""What the sampler's `torch.Generator.manual_seed` takes (int64 or uint64; llama.cpp clients send -1). A seed
outside it failed the denoising loop, after the work had started."""


def denoise_params(params: Any) -> tuple[DenoiseParams, int | None]:
    """(DenoiseParams, deadline_ms) from a `schemas.Params`; unset fields keep `DenoiseParams.fast()`'s."""
    given = {f.name: getattr(params, f.name) for f in fields(DenoiseParams)}
    for name, limit in PARAM_LIMITS.items():
        if given[name] is not None and given[name] > limit:
            raise RequestError(f"params.{name} {given[name]}: at most {limit}")
    seed = given["seed"]
    if seed is not None and not SEEDS[0] <= seed <= SEEDS[1]:
        raise RequestError(f"seed {seed}: give a 64-bit integer, {SEEDS[0]} to {SEEDS[1]}")
    temperature = given["temperature"]
    if temperature is not None and temperature != 0 and not MIN_TEMPERATURE <= temperature <= MAX_TEMPERATURE:
        raise RequestError(f"temperature {temperature}: give 0 (greedy) or {MIN_TEMPERATURE} to {MAX_TEMPERATURE}")
    try:
        return user_settings.denoise_params("fast", **given), params.deadline_ms
    except ValueError as exc:
        raise RequestError(f"params: {exc}") from None


def check_rows(engine: Any, rows: int, name: str) -> None:
    """Refuse a request for more rows than the engine's queue holds, before any is built."""
    limit = engine.config.max_queue
    if rows > limit:
        raise RequestError(f"{name}: {rows} rows in one call, more than the {limit} the engine's queue holds")


def sampling(temperature: float | None, top_p: float | None, seed: int | None) -> DenoiseParams:
    """DenoiseParams.fast() with the OpenAI-style sampling fields that were given."""
    params = schemas.Params(temperature=temperature, top_p=top_p, seed=seed)
    return denoise_params(params)[0]


def expire(ticket: Ticket, deadline_ms: int | None) -> Ticket:
    try:
        ticket.expire_after(deadline_ms)
    except ValueError as exc:
        raise RequestError(f"params.{exc}") from None
    return ticket


def language(name: str) -> LanguageSpec:
    try:
        return get_language(name)
    except UnsupportedLanguage as exc:
        raise RequestError(f"language: {exc}") from None


# -- text endpoints -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TextJob:
    """A completion at the cursor between `prefix` and `suffix`; `max_tokens` caps masks plus growth, and 0
    asks for none: the text is evaluated into `doc_id`'s cache and nothing is written (llama-server's
    `n_predict: 0`). `doc_id`: the engine keeps this document's keys/values for the next request with it
    (None: nothing kept). `line_deadline_ms`: llama-server's `t_max_predict_ms` (`infill.line_deadline`).
    `extra`: code from other files (`extra_context`)."""

    prefix: str
    suffix: str
    language: str
    params: DenoiseParams
    max_tokens: int | None = None
    stops: tuple[str, ...] = ()
    n: int = 1
    doc_id: str | None = None
    line_deadline_ms: int | None = None
    extra: tuple[Chunk, ...] = ()


@dataclass
class TextOutcome:
    """`prompt_tokens`: the canvas's text tokens (masks not counted); `stats`: the engine's, once per
    distinct completion."""

    texts: list[str]
    finish_reasons: list[str]  # "stop", "length" (max_tokens written) or "cancelled"
    prompt_tokens: int
    stats: Stats


def complete(engine: Any, job: TextJob, ticket: Ticket) -> TextOutcome:
    """Complete at the cursor `job.n` times in one engine batch (sampling makes them differ; greedy
    decoding would write the same text n times, so it runs once)."""
    if job.n < 1:
        raise RequestError(f"n {job.n}: must be at least 1")
    check_rows(engine, job.n, f"n {job.n}")
    if job.max_tokens is not None and job.max_tokens < 0:
        raise RequestError(f"max_tokens {job.max_tokens}: must be at least 0")
    spec = language(job.language)
    text, cursor = cut_prompt(job.prefix, job.suffix, char_budget(engine))
    context = extra_header(job.extra, spec.comment_prefix, engine.tokenizer, engine.max_length)
    if job.max_tokens == 0:
        return _prefill(engine, job, spec, text, cursor, context, ticket)
    spot = plan_completion(text, cursor, spec)
    if spot is None:  # the line is complete: `dcomplete infill` writes nothing here either
        return TextOutcome([""] * job.n, ["stop"] * job.n, 0, Stats())
    [spots], max_grow = user_settings.cap_tokens([[spot]], job.max_tokens)
    spot = spots[0]
    options = FillOptions(max_grow=max_grow, line_deadline_ms=job.line_deadline_ms, context=context)
    rows = 1 if job.params.temperature == 0 else job.n
    fill_job = FillJob(text, spots, spec, job.doc_id if rows == 1 else None)
    results = run_fill(lambda: fill_many(engine, [fill_job] * rows, job.params, ticket, options))
    texts, reasons = [], []
    for result in results:
        written = result.edits[0].new_text if result.edits else ""
        cut = min((i for i in (written.find(s) for s in job.stops if s) if i >= 0), default=-1)
        texts.append(written[:cut] if cut >= 0 else written)
        full = job.max_tokens is not None and result.stats.new_tokens >= job.max_tokens
        reasons.append("cancelled" if result.cancelled else "length" if full and cut < 0 else "stop")
    stats = Stats()
    for result in results:
        stats = stats.add(result.stats)
    prompt = len(results[0].canvas_ids) - spot.n_masks if results else 0
    if rows < job.n:
        texts, reasons = texts * job.n, reasons * job.n
    return TextOutcome(texts, reasons, prompt, stats)


def _prefill(engine: Any, job: TextJob, spec: LanguageSpec, text: str, cursor: int, context: str, ticket: Ticket
             ) -> TextOutcome:
    """Evaluate the text into `job.doc_id`'s cache: a one-token gap at the cursor, filled in one step (the
    step that evaluates the text), its token thrown away."""
    spot = Spot(cursor, cursor, 1, "line")
    options = FillOptions(max_grow=0, retries=0, context=context)
    [result] = run_fill(lambda: fill_many(engine, [FillJob(text, (spot,), spec, job.doc_id)], job.params, ticket,
                                          options))
    stats = dataclasses.replace(result.stats, new_tokens=0)
    reason = "cancelled" if result.cancelled else "length"
    return TextOutcome([""] * job.n, [reason] * job.n, len(result.canvas_ids) - 1, stats)


def run_fill(run: Callable[[], list[FillResult]]) -> list[FillResult]:
    try:
        return run()
    except ContextOverflow as exc:
        raise RequestError(f"the text does not fit the model's context: {exc}") from None
    except ValueError as exc:
        raise RequestError(str(exc)) from None


# -- code from other files ---------------------------------------------------------------------


def extra_chunks(extra: Sequence[schemas.ExtraChunk]) -> tuple[Chunk, ...]:
    """The `extra` field of the OpenAI-style and native bodies (llama.cpp's `input_extra` shape)."""
    return tuple(client_chunks([(c.filename, c.text) for c in extra]))


# -- native /v1/infill, canvas form --------------------------------------------------------------


TOKEN_IDS = 2**32
"""Tokenizer ids are unsigned 32-bit integers; `before` is decoded by the tokenizer during the engine's loop,
where an id outside them would fail every row of the batch."""


def canvas_rows(engine: Any, canvases: Sequence[schemas.CanvasIn]) -> list[InfillRequest]:
    """Engine rows for ready canvases; leads and span ends rebuilt with the engine's own tokenizer."""
    if not canvases:
        raise RequestError("canvases: give at least one canvas")
    check_rows(engine, len(canvases), "canvases")
    longest = char_budget(engine)
    rows = []
    for i, c in enumerate(canvases):
        where = f"canvases[{i}]"
        if len(c.ids) > engine.max_length:
            raise RequestError(f"{where}.ids: {len(c.ids)} tokens, the model takes at most {engine.max_length}")
        if engine.special.mask_id not in c.ids:
            raise RequestError(f"{where}.ids: no mask token (id {engine.special.mask_id}) to fill")
        if c.max_grow < 0:
            raise RequestError(f"{where}.max_grow: must be >= 0, got {c.max_grow}")
        for j, lead in enumerate(c.span_leads):
            if lead is not None and len(lead) > longest:
                raise RequestError(f"{where}.span_leads[{j}]: {len(lead)} characters, more than the model's "
                                   f"context of {engine.max_length} tokens can write")
            if lead and not lead_writable(lead, engine.tokenizer):
                raise RequestError(f"{where}.span_leads[{j}]: no sequence of the model's tokens spells {lead[:40]!r}")
        leads = tuple(TextLead(t, engine.tokenizer) if t else None for t in c.span_leads)
        ends = tuple(_span_end(engine, e, f"{where}.span_ends[{j}]") for j, e in enumerate(c.span_ends))
        rows.append(InfillRequest(list(c.ids), c.doc_id, c.max_grow, tuple(frozenset(s) for s in c.span_stops),
                                  leads, ends))
    return rows


def _span_end(engine: Any, end: schemas.EndSpec | None, where: str) -> TextEnd | LineDeadline | None:
    if end is None:
        return None
    s = end.slot
    try:
        slot = Slot(Spot(s.spot.start, s.spot.end, s.spot.n_masks, s.spot.kind), s.start, s.end, s.lead, s.tail)
    except ValueError as exc:
        raise RequestError(f"{where}.slot.spot: {exc}") from None
    if not s.spot.end <= len(end.text):
        raise RequestError(f"{where}.slot.spot: ends at {s.spot.end}, past the text ({len(end.text)} characters)")
    if any(not 0 <= t < TOKEN_IDS for t in end.before):
        raise RequestError(f"{where}.before: token ids run from 0 to {TOKEN_IDS - 1}")
    text_end = TextEnd(slot, end.text, language(end.language), engine.tokenizer, before=end.before)
    if end.deadline_ms is None:
        return text_end
    return LineDeadline(end.deadline_ms, "" if end.before else slot.lead, engine.tokenizer, text_end)


def fill_canvases(engine: Any, body: schemas.CanvasInfill, ticket: Ticket) -> list[InfillResult]:
    params, deadline = denoise_params(body.params)
    rows = canvas_rows(engine, body.canvases)
    try:
        results: list[InfillResult] = engine.infill(rows, params, cancel=expire(ticket, deadline))
        return results
    except ValueError as exc:
        raise RequestError(f"canvases: {exc}") from None
