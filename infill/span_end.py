"""When a span written left to right is complete: the engine's `SpanEnd` for one slot.

A left-to-right model that never writes end-of-text for a block writes on until its token budget, and
post-processing then throws that text away. Stopping the span as soon as post-processing would cut it at
a point more text cannot move saves those forwards without changing the edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from infill.canvas import Slot
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
    span in a retry canvas (`infill.bans`), which its text continues."""

    def __init__(self, slot: Slot, text: str, spec: LanguageSpec, tokenizer: Any, before: Sequence[int] = ()) -> None:
        self.slot, self.text, self.spec, self.tokenizer = slot, text, spec, tokenizer
        self.before = list(before)

    def reached(self, written: Sequence[int]) -> bool:
        return bool(written) and span_complete(
            decode(self.tokenizer, self.before + list(written)), self.slot, self.text, self.spec
        )


class Decided:
    """`engine.types.SpanEnd` of a span that only judges a rival text (`FillJob.rivals`): complete as soon as
    what it wrote has left the text the span replaces, or spelled all of it (the engine has then noted the
    span's margins; nothing written after that is shown), or when `then` says so."""

    def __init__(self, reference: TextReference, then: SpanEnd) -> None:
        self.reference, self.then = reference, then

    def reached(self, written: Sequence[int]) -> bool:
        return self.reference.decided(written) or self.then.reached(written)
