"""When a span written left to right is complete: the engine's `SpanEnd` for one slot.

A left-to-right model that never writes end-of-text for a block writes on until its token budget, and
post-processing then throws that text away. Stopping the span as soon as post-processing would cut it at
a point more text cannot move saves those forwards without changing the edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from infill.canvas import Slot
from infill.first_statement import first_statement
from infill.languages import LanguageSpec
from infill.postprocess import decode, echo_target, line_may_grow, opens_grown_block, shape_text

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
    once it holds its first complete statement (`infill.first_statement`)."""

    def __init__(self, slot: Slot, text: str, spec: LanguageSpec, tokenizer: Any, before: Sequence[int] = (),
                 first: bool = False) -> None:
        self.slot, self.text, self.spec, self.tokenizer = slot, text, spec, tokenizer
        self.before = list(before)
        self.first = first and slot.spot.start == slot.spot.end

    def reached(self, written: Sequence[int]) -> bool:
        if not written:
            return False
        raw = decode(self.tokenizer, self.before + list(written))
        if self.first and len(raw) > len(self.slot.lead) and "\n" in raw[len(self.slot.lead):]:
            body = shape_text(raw, self.slot, self.text, self.spec).text
            if first_statement(body, self.text, self.slot.spot.start, self.spec) is not None:
                return True
        return span_complete(raw, self.slot, self.text, self.spec)


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
