"""What crosses `infill.fill`'s API: the options of a fill, one document's job, and its result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from infill.languages import LanguageSpec
from infill.spots import Edit, Spot

if TYPE_CHECKING:
    from engine import Stats


@dataclass(frozen=True)
class FillOptions:
    """retries: re-mask rounds after a result that adds parse errors; keep_invalid: keep the best
    result even when it still adds errors; max_grow: tokens the engine may add to a document's spans
    (None: `infill.fill_document.GROW_PER_SPOT` per spot); instruction: a comment block put at the top of
    the context;
    heal: False keeps gaps at the raw cursor for an engine that writes left to right (to measure what
    healed token boundaries are worth; `infill.leads`); line_deadline_ms: for such an engine, a span ends at
    the first line break it writes this long after its first token (llama-server's `t_max_predict_ms`,
    `infill.line_deadline`); context: code from other files, formatted, put at the top of the canvas below
    the instruction and never cropped (so a document cache keeps it from one request to the next);
    one_line: an insertion keeps its first line only and never grows into a block (an editor set to
    single-line suggestions); compare: each span is compared with the text it replaces, and the result's
    `margins` say how much the model preferred writing something else (next edits); max_length: the canvas's
    tokens at most (None: the model's context), a smaller window for a faster first step; first_statement: an
    insertion ends after its first complete statement (a block header goes on to its body's first one:
    `infill.first_statement`), for automatic triggers set to `automaticUntil: "statement"`."""

    retries: int = 2
    keep_invalid: bool = False
    max_grow: int | None = None
    instruction: str | None = None
    heal: bool = True
    line_deadline_ms: int | None = None
    context: str = ""
    one_line: bool = False
    compare: bool = False
    max_length: int | None = None
    first_statement: bool = False


@dataclass(frozen=True)
class FillJob:
    text: str
    spots: tuple[Spot, ...]
    language: str | LanguageSpec = "python"
    doc_id: str | None = None
    context: str | None = None
    """This document's code from other files, in place of `FillOptions.context` (None: the options'): a
    batch of files from several projects (`dcomplete refactor`) shares one `FillOptions`."""
    rivals: tuple[str | None, ...] = ()
    """With `FillOptions.compare`, per spot: another text for it (a rule's proposal) that the model weighs
    against the text there (`FillResult.rival_margins`); on an engine that writes left to right such a spot is
    written only until its verdict is in (`infill.span_end.Decided`)."""


@dataclass
class FillResult:
    edits: list[Edit]
    canvas_ids: list[int]
    stats: Stats
    cancelled: bool = False
    notes: list[str] = field(default_factory=list)
    attempts: int = 1
    rescued: int = 0
    """Spots whose first result broke the parse and whose edit comes from a re-mask round that parses."""
    unbinding: int = 0
    """Spots with a result (in any attempt) that parsed but no longer defined a name the code after it reads
    (`infill.scope`): retried as a result that breaks the parse is, and dropped if no attempt keeps it."""
    margins: list[float | None] = field(default_factory=list)
    """Per spot, in canvas order, with `FillOptions.compare`: the first attempt's `engine.types.Span.margin`."""
    rival_margins: list[float | None] = field(default_factory=list)
    """Likewise, `engine.types.Span.rival_margin` of spots given a rival (`FillJob.rivals`)."""
