"""One document's fill through its attempts (`DocumentFill`): the canvas and what each span may write,
the result of each engine round judged by the parse check, the retry of what broke it, the best attempt
settled. `infill.fill` runs documents through their rounds together."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infill.bans import (
    BanPlan,
    blamed_offset,
    lead_token_count,
    moved_spans,
    offending_index,
    plan_ban,
    retry_lead,
)
from infill.canvas import (
    Canvas,
    ContextOverflow,
    Slot,
    canvas_for,
    check_spots,
    instruction_header,
    line_break_ids,
)
from infill.fill_types import FillJob, FillOptions, FillResult
from infill.first_statement import cut_to_first_statement
from infill.languages import get_language
from infill.leads import SpanLead, TextLead, TextReference
from infill.line_deadline import LineDeadline
from infill.line_shape import ShapeLead, on_blank_line, shape_plans, unshaped_slots
from infill.postprocess import decode, finish, line_may_grow, span_ids, whole_lines
from infill.repair import Baseline, ParseCheck, baseline, check_filled, remasked
from infill.settle import settle
from infill.span_end import Decided, TextEnd
from infill.spots import Edit, Spot
from infill.worth_showing import drop_reason

if TYPE_CHECKING:
    from engine import InfillRequest, InfillResult, Stats
    from engine.api import EngineLike
    from engine.types import SpanEnd

GROW_PER_SPOT = {"line": 8, "block": 32}
GROWN_LINE = 48
"""Growth of a line insertion that may become a block (`postprocess.line_may_grow`) on an engine that writes
left to right: a line that opens a block goes on into its body (BLOCK_TOKENS of room, as a block spot)."""


@dataclass
class _Attempt:
    edits: list[Edit | None]
    raws: list[Any]
    check: ParseCheck
    dropped: list[str]
    ran_out: list[bool]  # per slot: its span filled to the last position with no end (`_ran_out`)


class DocumentFill:
    """One job through its attempts."""

    def __init__(self, job: FillJob, engine: EngineLike, options: FillOptions) -> None:
        self.job = job
        self.engine = engine
        self.options = options
        self.spec = get_language(job.language)
        spots = check_spots(job.spots, len(job.text))
        self.baseline: Baseline = baseline(job.text, self.spec, spots)
        grow = options.max_grow
        if grow is None:
            grow = sum(self._room(s) for s in spots)
        context = options.context if job.context is None else job.context
        header = instruction_header(options.instruction, self.spec.comment_prefix) + context
        self.max_grow = grow
        try:
            self.canvas: Canvas = self._build(spots, header, reserve=grow)
        except ContextOverflow:
            self.canvas = self._build(spots, header, reserve=0)
            self.max_grow = max(0, (options.max_length or engine.max_length) - len(self.canvas.ids))
        from engine import Stats  # engine (torch) loads only when a fill runs

        self.stats: Stats = Stats()
        self.cancelled = False
        self.current: list[int] = []
        self.positions: list[tuple[int, int]] = []
        self.margins: list[float | None] = []
        self.rival_margins: list[float | None] = []
        self.attempts: list[_Attempt] = []
        self.notes: list[str] = []
        self.bans: list[dict[tuple[int, ...], frozenset[int]]] = [{} for _ in self.canvas.slots]
        self.retried: dict[int, int] = {}
        """Slot -> tokens kept ahead of its span, for the slots the last ban retry re-decoded (its spans)."""
        self.shaped: set[Slot] = set()
        """Slots re-decoded to the baseline's line shape (`infill.line_shape`); their later retries keep it."""

    def _build(self, spots: list[Spot], header: str, reserve: int) -> Canvas:
        """The canvas, with `reserve` tokens of the context kept free for span growth (distant
        context lines give way to growth room)."""
        return canvas_for(self.engine, self.job.text, spots, self.options.max_length, header=header, reserve=reserve,
                          heal=self.options.heal)

    def _grows(self, spot: Spot) -> bool:
        """Whether a line insertion may go on into a block: on an engine that writes left to right (its span
        end sees the first line), not for single-line suggestions, and not on a line that must open a block
        whose body is already there (`Baseline.shape`)."""
        if self.baseline.shape is not None and on_blank_line(self.job.text, spot):
            return False
        return self.engine.left_to_right and not self.options.one_line and line_may_grow(spot, self.job.text, self.spec)

    def _room(self, spot: Spot) -> int:
        return GROWN_LINE if self._grows(spot) else GROW_PER_SPOT[spot.kind]

    def _stops(self, slot: Slot) -> frozenset[int]:
        """A one-line insertion keeps only its first line (`shape_text`), so a line break ends it, unless the
        line may grow into a block: then its span end (`TextEnd`) decides."""
        spot = slot.spot
        if slot not in self.shaped and (spot.kind != "line" or spot.start != spot.end or self._grows(spot)):
            return frozenset()
        return line_break_ids(self.engine.tokenizer)

    def _lead(self, slot: Slot) -> SpanLead | None:
        if not self.engine.left_to_right:
            return None
        base = TextLead(slot.lead, self.engine.tokenizer) if self.options.heal and slot.lead else None
        if slot in self.shaped and self.baseline.shape is not None:
            return ShapeLead.at(base, self.baseline.shape, self.spec, self.job.text, slot.spot.start,
                                self.engine.tokenizer)
        return base

    def _span_stops(self) -> tuple[frozenset[int], ...]:
        return tuple(self._stops(slot) for slot in self.canvas.slots)

    def _span_leads(self) -> tuple[SpanLead | None, ...]:
        if not self.engine.left_to_right or not self.options.heal:
            return ()
        return tuple(self._lead(slot) for slot in self.canvas.slots)

    def _span_ends(self) -> tuple[SpanEnd, ...]:
        if not self.engine.left_to_right:
            return ()
        ends = tuple(self._end(slot) for slot in self.canvas.slots)
        if self.options.compare:  # a span that judges a rival is done once its verdict is in
            refs, rivals = self._references()
            ends = tuple(end if rival is None else Decided(ref, rival, end)
                         for end, ref, rival in zip(ends, refs, rivals))
        return ends

    def _end(self, slot: Slot, before: Sequence[int] = ()) -> SpanEnd:
        """The end of `slot`'s span (`before`: a retry's kept tokens, the lead among them): post-processing's
        cut, the first statement when asked, the first parsing line end past `line_deadline_ms`."""
        tokenizer, ms = self.engine.tokenizer, self.options.line_deadline_ms
        end: SpanEnd = TextEnd(slot, self.job.text, self.spec, tokenizer, before=before,
                               first=self.options.first_statement, original=self.baseline)
        return end if ms is None else LineDeadline(ms, "" if before else slot.lead, tokenizer, end)

    def first_request(self) -> InfillRequest:
        from engine import InfillRequest

        refs, rivals = self._references() if self.options.compare else ((), ())
        return InfillRequest(list(self.canvas.ids), self.job.doc_id, self.max_grow, self._span_stops(),
                             self._span_leads(), self._span_ends(), span_refs=refs, span_rivals=rivals)

    def _references(self) -> tuple[tuple[TextReference, ...], tuple[TextReference | None, ...]]:
        """Each span's text as it stands, and its rival text when the job gives one, as the engine compares
        them with what it writes (after the lead the canvas moved into the span)."""
        tokenizer, text = self.engine.tokenizer, self.job.text
        given = dict(zip(self.job.spots, self.job.rivals))
        refs = tuple(TextReference(slot.lead + text[slot.spot.start : slot.spot.end], tokenizer)
                     for slot in self.canvas.slots)
        rivals = tuple(None if given.get(slot.spot) is None else TextReference(slot.lead + str(given[slot.spot]),
                                                                                tokenizer)
                       for slot in self.canvas.slots)
        return refs, rivals

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
            self.margins = [span.margin for span in result.spans]
            self.rival_margins = [span.rival_margin for span in result.spans]
        elif self.retried:
            self.positions = moved_spans(self.positions, self.retried, [(s.start, s.end) for s in result.spans])
        if not self.cancelled:
            self.attempts.append(self._evaluate())

    def _evaluate(self) -> _Attempt:
        text, special, tokenizer = self.job.text, self.engine.special, self.engine.tokenizer
        edits: list[Edit | None] = []
        raws = []
        dropped = []
        ran_out = []
        needs_closer = self.baseline.shape is not None and self.baseline.shape.closes
        for slot, (start, end) in zip(self.canvas.slots, self.positions):
            kept = span_ids(self.current[start:end], special)
            ran_out.append(self._ran_out(slot, self.current[start:end]))
            if ran_out[-1]:
                lead = lead_token_count(tokenizer, kept, slot.lead)  # its line break ends no line written
                kept = kept[:lead] + (whole_lines(kept[lead:], line_break_ids(tokenizer)) or kept[lead:])
            shaped, new_text = finish(decode(tokenizer, kept), slot, text, self.spec)
            spot = slot.spot
            if self.options.one_line and spot.start == spot.end:
                new_text = new_text.split("\n", 1)[0].rstrip()
            elif self.options.first_statement and spot.start == spot.end:
                new_text = cut_to_first_statement(new_text, text, spot.start, self.spec)
            reason = drop_reason(new_text, text, spot.end, spot.start if spot.start == spot.end else None,
                                 needs_closer)
            raws.append((kept, shaped))
            if reason is not None or new_text == text[spot.start : spot.end]:
                dropped.append(f"line {text.count(chr(10), 0, spot.start) + 1}: "
                               f"{reason or 'the result equals the original'}")
                edits.append(None)
                continue
            edits.append(Edit(spot.start, spot.end, new_text, tuple(kept)))
        return _Attempt(edits, raws, check_filled(text, edits, self.baseline, self.spec), dropped, ran_out)

    def _ran_out(self, slot: Slot, ids: list[int]) -> bool:
        """Whether a completion at the cursor (an insertion) on an engine that writes left to right filled its
        span to the last position with no end: the room ran out (the growth budget, or a retry's span), not
        the text, so its last line is cut, and a multi-line one keeps its whole lines. A single line that
        ran out is left to the parse check (a prefix of a long line can still be worth accepting), as is a
        regenerated range, whose retries re-decode from where it broke."""
        special = self.engine.special
        ends = {special.eos_id, special.pad_id, special.mask_id} | self._stops(slot)
        insertion = slot.spot.start == slot.spot.end
        return self.engine.left_to_right and insertion and not any(t in ends for t in ids)

    def wants_retry(self) -> bool:
        if self.cancelled or not self.attempts:
            return False
        if self._unshaped():
            return any(plan is not None for plan in self._planned()[0])
        last = self.attempts[-1]
        if last.check.added <= 0 or all(w is None for w in last.check.where):
            return False
        return not self.engine.left_to_right or any(plan is not None for plan in self._planned()[0])

    def _unshaped(self) -> list[int]:
        """For an engine that writes left to right: the slots on a line that must have the baseline's shape
        (`Baseline.shape`) whose last result was dropped, empty, or broke the parse."""
        if self.baseline.shape is None or not self.engine.left_to_right:
            return []
        last = self.attempts[-1]
        return unshaped_slots(self.job.text, [s.spot for s in self.canvas.slots], last.edits, last.check.where)

    def _planned(self) -> tuple[list[BanPlan | None], list[int]]:
        """Left to right: each span's retry (None: none, or no position left after the tokens it keeps, as
        in a line of `max_tokens` that was all lead) and the slots held to the baseline's line shape."""
        if unshaped := self._unshaped():
            kept = [ids for ids, _ in self.attempts[-1].raws]
            plans = shape_plans(self.engine.tokenizer, self.canvas.slots, kept, unshaped, self.bans)
        else:
            plans = self._ban_plans()
        roomy = [plan if plan is not None and plan.index < end - start else None
                 for plan, (start, end) in zip(plans, self.positions)]
        return roomy, unshaped

    def _ban_plans(self) -> list[BanPlan | None]:
        """For an engine that writes left to right: where each span that broke the parse restarts, and what
        it may not write there again."""
        last = self.attempts[-1]
        tokenizer, special = self.engine.tokenizer, self.engine.special
        ends = frozenset({special.eos_id, special.pad_id})
        plans: list[BanPlan | None] = []
        for slot, (start, end), (kept, shaped), where, bans, ran_out in zip(
            self.canvas.slots, self.positions, last.raws, last.check.where, self.bans, last.ran_out
        ):
            blamed = None if where is None else blamed_offset(shaped.text, where, self.spec)
            # a span that ran out of room and lacks what its end needs: a retry would have only the line the
            # cut took off, so the result is settled (cut back to where it parses) instead
            if blamed is None or (ran_out and blamed >= len(shaped.text.rstrip())):
                plans.append(None)
                continue
            index = offending_index(tokenizer, kept, shaped, blamed)
            lead = lead_token_count(tokenizer, kept, slot.lead) if self.options.heal else 0
            plans.append(plan_ban(self.current[start:end], kept, index, lead, ends, bans))
        return plans

    def retry_request(self) -> InfillRequest:
        """The canvas of the last attempt with each span that broke the parse masked again, and the stops,
        leads and ends of just those spans (the request's spans are its mask runs)."""
        from engine import InfillRequest

        if self.engine.left_to_right:
            return self._ban_request()
        last = self.attempts[-1]
        canvas = remasked(self.current, self.positions, last.raws, last.check.where, self.engine)
        stops = tuple(self._stops(slot) for slot, where in zip(self.canvas.slots, last.check.where) if where is not None)
        return InfillRequest(canvas, self.job.doc_id, 0, stops)

    def _ban_request(self) -> InfillRequest:
        from engine import InfillRequest

        last = self.attempts[-1]
        canvas = list(self.current)
        stops, leads, ends = [], [], []
        tokenizer, special = self.engine.tokenizer, self.engine.special
        self.retried = {}
        plans, unshaped = self._planned()
        self.shaped.update(self.canvas.slots[i] for i in unshaped)
        for slot_index, (slot, (start, end), (kept, _), plan, bans) in enumerate(
            zip(self.canvas.slots, self.positions, last.raws, plans, self.bans)
        ):
            if plan is None:
                continue
            before = tuple(kept[: plan.index])
            bans[before] = plan.banned
            self.retried[slot_index] = plan.index
            canvas[start + plan.index : end] = [self.engine.special.mask_id] * (end - start - plan.index)
            stops.append(self._stops(slot))
            leads.append(retry_lead(self._lead(slot), before, plan.banned, stops[-1], special, self.spec, tokenizer))
            ends.append(self._end(slot, before))
        grown = len(self.current) - len(self.canvas.ids)  # the growth the first attempt used of max_grow
        return InfillRequest(canvas, self.job.doc_id, max(0, self.max_grow - grown), tuple(stops), tuple(leads),
                             tuple(ends))

    def result(self) -> FillResult:
        canvas_ids = list(self.canvas.ids)
        if not self.attempts:
            return FillResult([], canvas_ids, self.stats, True, ["cancelled"], 0)
        first = self.attempts[0]
        best = min(self.attempts, key=lambda a: (a.check.added, a.edits.count(None)))
        edits: list[Edit | None] = list(best.edits)
        self.notes.extend(best.dropped)
        if not self.spec.has_grammar and any(edits):
            self.notes.append(f"no parse check ran ({self.spec.id}: no grammar for this language)")
        if not self.options.keep_invalid:
            edits, notes = settle(self.job.text, edits, self.baseline, self.spec)
            self.notes.extend(notes)
        rescued = sum(1 for index, edit in enumerate(edits) if best is not first and edit is not None
                      and first.check.where[index] is not None and edit == best.edits[index])
        unbinding = sum(1 for index in range(len(edits))
                        if any(a.check.unbound and a.check.unbound[index] is not None for a in self.attempts))
        return FillResult([e for e in edits if e is not None], canvas_ids, self.stats, self.cancelled, self.notes,
                          len(self.attempts), rescued, unbinding, self.margins, self.rival_margins)
