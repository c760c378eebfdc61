"""When a span written left to right is complete: the engine's `SpanEnd` for one slot.

A left-to-right model that never writes end-of-text for a block writes on until its token budget, and
post-processing then throws that text away. Stopping the span as soon as post-processing would cut it at
a point more text cannot move saves those forwards without changing the edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from infill.bans import ends_with_header
from infill.canvas import Slot
from infill.first_statement import cut_to_first_statement, first_statement
from infill.languages import LanguageSpec
from infill.positions import ByteMap
from infill.postprocess import decode, echo_target, finish, line_may_grow, opens_grown_block, shape_text
from infill.repair import Baseline, baseline, check_filled, filled_text
from infill.spots import Edit
from infill.syntax import open_brackets

if TYPE_CHECKING:
    from engine.types import SpanEnd
    from infill.leads import TextReference


def span_complete(raw: str, slot: Slot, text: str, spec: LanguageSpec) -> bool:
    """Whether `raw` (a span's decoded text so far) already holds all of the edit: `shape_text` drops a
    non-blank line (one that leaves the block, or a loop), or complete lines repeat the text after the spot
    in full (what `trim_suffix_echo` cuts). A one-line insertion ends with its first line, unless that line
    opens a block it may carry (`line_may_grow`); one that may not grow is left to its line-break stop."""
    spot = slot.spot
    if len(raw) <= len(slot.lead):
        return False  # the healed lead is not written yet (its line break is not the end of a line)
    if spot.kind == "line" and spot.start == spot.end:
        if not line_may_grow(spot, text, spec):
            return False
        shaped = shape_text(raw, slot, text, spec)
        first, newline, _ = raw[shaped.raw_start :].partition("\n")
        if not newline:
            return False
        if not opens_grown_block(first.rstrip("\r"), spot, text, spec):
            return True
    shaped = shape_text(raw, slot, text, spec)
    body = raw[shaped.raw_start :]
    if _nonblank_lines(shaped.text) < _nonblank_lines(body):
        return True
    target = echo_target(text[spot.end :], spec)
    complete = [line.strip() for line in body.split("\n")[:-1] if line.strip()]
    return bool(target) and any(complete[i : i + len(target)] == target for i in range(len(complete)))


def _nonblank_lines(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.strip())


class TextEnd:
    """`engine.types.SpanEnd` for one slot of a canvas; `before`: the slot's tokens kept ahead of the
    span in a retry canvas (`infill.bans`), which its text continues; `first`: an insertion is complete
    once it holds its first complete statement (`infill.first_statement`); `original`: the text's parse
    baseline, when the caller has it (made on first use otherwise)."""

    def __init__(self, slot: Slot, text: str, spec: LanguageSpec, tokenizer: Any, before: Sequence[int] = (),
                 first: bool = False, original: Baseline | None = None) -> None:
        self.slot, self.text, self.spec, self.tokenizer = slot, text, spec, tokenizer
        self.before = list(before)
        self.first = first and slot.spot.start == slot.spot.end
        self._original = original

    def reached(self, written: Sequence[int]) -> bool:
        if not written:
            return False
        raw = decode(self.tokenizer, self.before + list(written))
        if self.first and len(raw) > len(self.slot.lead) and "\n" in raw[len(self.slot.lead):]:
            body = shape_text(raw, self.slot, self.text, self.spec).text
            if first_statement(body, self.text, self.slot.spot.start, self.spec) is not None:
                return True
        return span_complete(raw, self.slot, self.text, self.spec)

    def may_end(self, written: Sequence[int]) -> bool:
        """False where the edit `written` makes breaks the parse for want of what would follow it: the
        check blames the end of its text (a name the text after it reads is not bound yet), its last line
        opens a block, or it leaves a bracket it opened unclosed (tree-sitter blames the opener). A retry
        would mend that by banning the end and writing on (`infill.bans`); the run writes on at once
        instead, without a second canvas and its first forward."""
        raw = decode(self.tokenizer, self.before + list(written))
        if len(raw) <= len(self.slot.lead):
            return True
        spot = self.slot.spot
        new_text = finish(raw, self.slot, self.text, self.spec)[1]
        if self.first:
            new_text = cut_to_first_statement(new_text, self.text, spot.start, self.spec)
        if not new_text.strip() or new_text == self.text[spot.start : spot.end]:
            return True  # dropped or no change: nothing of it is checked
        if self._original is None:
            self._original = baseline(self.text, self.spec, [spot])
        edit = Edit(spot.start, spot.end, new_text, ())
        check = check_filled(self.text, [edit], self._original, self.spec)
        where = check.where[0]
        if not check.added or where is None:
            return True
        if where >= len(new_text.rstrip()) or ends_with_header(new_text, self.spec):
            return False
        filled, starts = filled_text(self.text, [edit])
        offsets = ByteMap(filled)
        start = offsets.to_byte(starts[0])
        return not open_brackets(self.spec.parse(filled), offsets.to_byte(starts[0] + len(new_text)), start)


class Decided:
    """`engine.types.SpanEnd` of a span that judges a rival text (`FillJob.rivals`): complete as soon as what
    it wrote has left both the text the span replaces and the rival, or spelled all of either and left the
    other (the engine has then noted the span's margins, the rival's where the written text parted from it;
    nothing written after that is shown), or when `then` says so. Where the text there is the start of the
    rival (`Dependency`, the rule's `DependencyContainer`), the verdict is the token after it."""

    def __init__(self, reference: TextReference, rival: TextReference, then: SpanEnd) -> None:
        self.reference, self.rival, self.then = reference, rival, then

    def reached(self, written: Sequence[int]) -> bool:
        return (self.reference.decided(written) and self.rival.decided(written)) or self.then.reached(written)

    def may_end(self, written: Sequence[int]) -> bool:
        return self.then.may_end(written)
