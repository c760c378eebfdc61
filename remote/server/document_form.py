"""The native `/v1/infill` document form: a whole document and where to fill it (spots, hole markers or
line ranges). The document is cut to the part the model's context can reach around what is filled
(`bounds.cut_around`) before anything parses or tokenizes it, and the edits and the notes' line numbers
are moved back to the whole document's."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from engine import Stats
from infill.canvas import check_spots
from infill.fill import FillOptions, FillResult, fill
from infill.holes import find_holes, hole_pattern
from infill.languages import LanguageSpec
from infill.spots import Spot
from infill.tickets import Ticket
from infill.windows import plan_regenerate
from remote.server import schemas
from remote.server.bounds import char_budget, cut_around
from remote.server.extra_context import extra_header
from remote.server.service import RequestError, denoise_params, expire, extra_chunks, language, run_fill

_NOTE_LINE = re.compile(r"^line (\d+):")


def fill_document(engine: Any, body: schemas.DocumentInfill, ticket: Ticket) -> FillResult:
    spec = language(body.language)
    params, deadline = denoise_params(body.params)
    if sum([body.spots is not None, body.holes, body.ranges is not None]) != 1:
        raise RequestError("give exactly one of spots, holes (true) or ranges")
    budget = char_budget(engine)
    given = _given_spots(body)
    extent = _extent(body, given, spec, budget, engine.max_length)
    offset, text = (0, body.text) if extent is None else cut_around(body.text, *extent, budget)
    spots = _spots(body, given, text, offset, spec, engine.tokenizer)
    if not spots:
        return FillResult([], [], Stats(), notes=["no spot to fill"], attempts=0)
    expire(ticket, deadline)
    options = FillOptions(context=extra_header(extra_chunks(body.extra), spec.comment_prefix, engine.tokenizer,
                                               engine.max_length))
    result = run_fill(lambda: [fill(engine, text, spots, params, spec, cancel=ticket, options=options)])[0]
    return _moved(result, offset, body.text.count("\n", 0, offset)) if offset else result


def _given_spots(body: schemas.DocumentInfill) -> list[Spot] | None:
    """The `spots` form's spots, checked against the whole document (so errors name its offsets)."""
    if body.spots is None:
        return None
    try:
        return check_spots([Spot(s.start, s.end, s.n_masks, s.kind) for s in body.spots], len(body.text))
    except ValueError as exc:
        raise RequestError(f"spots: {exc}") from None


def _extent(body: schemas.DocumentInfill, given: list[Spot] | None, spec: LanguageSpec, budget: int,
            max_length: int) -> tuple[int, int] | None:
    """[start, end) of the document that the request fills, found without parsing or tokenizing it; None
    when there is nothing to cut around (no spot, or line ranges that are not inside the text, which
    `plan_regenerate` names). Spots or ranges with more text between them than the context holds are
    refused here, before the whole document is parsed for nothing."""
    text = body.text
    if given is not None:
        return _spanned([(s.start, s.end) for s in given], budget, max_length) if given else None
    if body.holes:  # not refused by distance: a marker inside a string is no hole, which only a parse tells
        markers = [(m.start(2), m.end(0)) for m in hole_pattern(spec).finditer(text)]
        return (markers[0][0], markers[-1][1]) if markers else None
    assert body.ranges is not None
    lines = text.count("\n") + 1 - text.endswith("\n")
    if not body.ranges or not all(1 <= a <= b <= lines for a, b in body.ranges):
        return None
    spans = [(_line_start(text, a - 1), _line_start(text, b)) for a, b in body.ranges]
    for (start, end), (a, b) in zip(spans, body.ranges):
        if end - start > budget:  # more tokens than the context holds, so more masks than it holds
            raise RequestError(f"ranges: lines {a}-{b} hold {end - start} characters, more than the model's "
                               f"context of {max_length} tokens can rewrite")
    return _spanned(spans, budget, max_length)


def _spanned(spans: list[tuple[int, int]], budget: int, max_length: int) -> tuple[int, int]:
    """From the first span's start to the last one's end, when the text kept between them can fit."""
    start, end = min(a for a, _ in spans), max(b for _, b in spans)
    between = end - start - sum(b - a for a, b in spans)
    if between > budget:
        raise RequestError(f"the text does not fit the model's context: {between} characters lie between the "
                           f"first spot and the last, more than its {max_length} tokens can hold")
    return start, end


def _line_start(text: str, line: int) -> int:
    """The offset where 0-based `line` starts (the text's length past its last line)."""
    if line == 0:
        return 0
    found = re.match(rf"(?:[^\n]*\n){{{line}}}", text)
    return found.end() if found else len(text)


def _spots(body: schemas.DocumentInfill, given: list[Spot] | None, text: str, offset: int, spec: LanguageSpec,
           tokenizer: Any) -> list[Spot]:
    """The spots in the kept `text`, which starts at `offset` of the document."""
    if given is not None:
        return [dataclasses.replace(s, start=s.start - offset, end=s.end - offset) for s in given]
    try:
        if body.holes:
            return find_holes(text, spec)
        assert body.ranges is not None
        cut = body.text.count("\n", 0, offset)
        return [plan_regenerate(text, a - cut, b - cut, spec, tokenizer=tokenizer) for a, b in body.ranges]
    except ValueError as exc:
        raise RequestError(f"spots: {exc}") from None


def _moved(result: FillResult, offset: int, lines: int) -> FillResult:
    """`result` of the text cut at `offset` (after `lines` line breaks), in the whole document's terms."""
    edits = [dataclasses.replace(e, start=e.start + offset, end=e.end + offset) for e in result.edits]
    notes = [_NOTE_LINE.sub(lambda m: f"line {int(m.group(1)) + lines}:", note) for note in result.notes]
    return dataclasses.replace(result, edits=edits, notes=notes)
