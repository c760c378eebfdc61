"""Canvases: one document's spots as mask runs between its fixed text, in token ids.

`[bos] + header + tokens(text before spot 1) + [mask]*n1 + tokens(text between) + ... + [mask]*nk
+ tokens(text after spot k) + [eos]`. Each segment is tokenized on its own, so every mask run sits on
a token boundary and `Slot` records where each spot's run starts and ends.

When the document does not fit the model's context, the kept text is the lines nearest the spots,
added alternately above and below, one whole line at a time.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from infill.leads import lead_text, vocab_texts
from infill.positions import LineIndex
from infill.spots import Spot

if TYPE_CHECKING:
    from engine.api import EngineLike

_INDENT_AFTER_BREAK = re.compile(r"(?:^|\n)([ \t]+)$")


class Specials(Protocol):
    @property
    def mask_id(self) -> int: ...
    @property
    def eos_id(self) -> int: ...
    @property
    def pad_id(self) -> int: ...
    @property
    def bos_id(self) -> int: ...


@dataclass(frozen=True)
class Slot:
    """Where one spot's masks sit in the canvas: positions [start, end).

    `lead` is text just before the spot moved into the masked region so that the model writes it with its
    usual tokens: the indentation that preceded the spot on its line, or, with `heal` (models that write
    left to right), the boundary `infill.leads.lead_text` chooses, which the engine then constrains the
    span to start with. Post-processing removes it again. `tail` is how many characters at the end of a
    replaced range (its final line break, with `heal`) stay in the fixed text after the masks.
    """

    spot: Spot
    start: int
    end: int
    lead: str = ""
    tail: int = 0


@dataclass(frozen=True)
class Canvas:
    ids: tuple[int, ...]
    slots: tuple[Slot, ...]
    context_start: int
    context_end: int


class ContextOverflow(ValueError):
    """The spots and the text between them alone do not fit the model's context."""


@functools.lru_cache(maxsize=8)
def line_break_ids(tokenizer: Any) -> frozenset[int]:
    """The ids whose text holds a line break (cached per tokenizer)."""
    return frozenset(i for i, text in enumerate(vocab_texts(tokenizer)) if "\n" in text)


def encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False)) if text else []


def instruction_header(instruction: str | None, comment_prefix: str) -> str:
    """An instruction as a comment block for the top of the context, one comment line per line."""
    if not instruction or not instruction.strip():
        return ""
    lines = instruction.strip().splitlines()
    first, rest = lines[0], lines[1:]
    block = [f"{comment_prefix} Instruction: {first}"] + [
        f"{comment_prefix} {line}".rstrip() for line in rest
    ]
    return "\n".join(block) + "\n"


def check_spots(spots: Sequence[Spot], text_length: int) -> list[Spot]:
    ordered = sorted(spots, key=lambda s: (s.start, s.end))
    for spot in ordered:
        if spot.end > text_length:
            raise ValueError(f"spot [{spot.start}, {spot.end}) ends past the text (length {text_length})")
    for left, right in itertools.pairwise(ordered):
        if right.start <= left.end:
            raise ValueError(
                f"spots [{left.start}, {left.end}) and [{right.start}, {right.end}) overlap or touch;"
                " merge them into one"
            )
    return ordered


def build_canvas(
    text: str,
    spots: Sequence[Spot],
    tokenizer: Any,
    special: Specials,
    max_length: int,
    *,
    header: str = "",
    reserve: int = 0,
    heal: bool = False,
    max_right: int | None = None,
) -> Canvas:
    """The canvas for `spots` of `text`; `reserve` tokens are kept free for span growth. `heal`: gaps start
    and end at token boundaries the tokenizer produces (`Slot.lead`, `Slot.tail`); `max_right`: at most
    that many tokens of text after the last spot (the right context the model was trained with)."""
    ordered = check_spots(spots, len(text))
    if not ordered:
        raise ValueError("no spots to fill")
    header_ids = encode(tokenizer, header)
    masks = sum(s.n_masks for s in ordered)
    if 2 + len(header_ids) + masks > max_length:  # before the masks are laid out: a spot may ask for 10^9
        raise ContextOverflow(f"the spots' {masks} masks take more than the model's context of {max_length}")
    fixed = 2 + len(header_ids) + masks + reserve
    start, end = 0, _right_end(text, ordered[-1].end, tokenizer, max_right)
    assemble = functools.partial(_assemble, heal=heal)
    canvas = assemble(text, ordered, start, end, tokenizer, special, header_ids)
    if len(canvas.ids) + reserve > max_length:
        start, crop_end = _crop(text, ordered, tokenizer, max_length - fixed)
        end = min(end, crop_end)
        canvas = assemble(text, ordered, start, end, tokenizer, special, header_ids)
        lines = LineIndex(text)
        while len(canvas.ids) + reserve > max_length and (start < ordered[0].start or end > ordered[-1].end):
            above = start < lines.line_start(lines.line_of(ordered[0].start))
            if above:
                start = lines.line_start(lines.line_of(start) + 1)
            else:
                end = lines.line_start(lines.line_of(end - 1))
            canvas = assemble(text, ordered, start, end, tokenizer, special, header_ids)
        if len(canvas.ids) + reserve > max_length:
            raise ContextOverflow(
                f"the spots and the text between them take {len(canvas.ids)} tokens, more than the"
                f" model's context of {max_length}"
            )
    return canvas


def canvas_for(engine: EngineLike, text: str, spots: Sequence[Spot], max_length: int | None = None, *,
               header: str = "", reserve: int = 0, heal: bool = True) -> Canvas:
    """`build_canvas` with what the engine needs: its tokenizer, ids and context, and for an engine that
    writes left to right, healed token boundaries (unless `heal` is False) and its right-context limit."""
    return build_canvas(text, spots, engine.tokenizer, engine.special, max_length or engine.max_length,
                        header=header, reserve=reserve, heal=heal and engine.left_to_right,
                        max_right=engine.max_right if engine.left_to_right else None)


def _right_end(text: str, after: int, tokenizer: Any, max_right: int | None) -> int:
    """The end of the whole lines after offset `after` that fit in `max_right` tokens (the text's end
    when there is no limit)."""
    if max_right is None:
        return len(text)
    end = after
    used = 0
    while end < len(text):
        stop = text.find("\n", end + 1)
        stop = len(text) if stop < 0 else stop
        used += len(encode(tokenizer, text[end:stop]))
        if used > max_right:
            break
        end = stop
    return end


def _assemble(
    text: str, spots: list[Spot], start: int, end: int, tokenizer: Any, special: Specials, header: list[int],
    heal: bool = False,
) -> Canvas:
    ids = [special.bos_id, *header]
    slots: list[Slot] = []
    cursor = start
    for spot in spots:
        before = text[cursor : spot.start]
        if heal:
            lead = lead_text(before, tokenizer)
            if slots and lead == before:  # all the text between two spots: their masks would join into one span
                lead = ""
        else:
            lead_match = _INDENT_AFTER_BREAK.search(before) if spot.start == spot.end else None
            at_line_start = lead_match is not None and (
                lead_match.start(1) > 0 or cursor == 0 or text[cursor - 1] == "\n"
            )
            lead = lead_match.group(1) if lead_match and at_line_start else ""
        tail = 1 if heal and spot.end > spot.start and text[spot.end - 1] == "\n" and spot.end < end else 0
        ids.extend(encode(tokenizer, before[: len(before) - len(lead)]))
        slots.append(Slot(spot, len(ids), len(ids) + spot.n_masks, lead, tail))
        ids.extend([special.mask_id] * spot.n_masks)
        cursor = spot.end - tail
    ids.extend(encode(tokenizer, text[cursor:end]))
    ids.append(special.eos_id)
    return Canvas(tuple(ids), tuple(slots), start, end)


START_GRID = 32
"""A cropped canvas starts on a line whose number is a multiple of this. The engine reuses the K/V of the
longest token prefix a document's canvases share, and every token's K/V depend on all text before it: a
window that started one line lower for each line the user writes would prefill the whole window on every
request. On the grid, the start moves once every START_GRID lines, and each move prefills the window again
(700-900 tokens of the bundled model's 1,024: the slowest pauses of bench.lsp_latency). 32 lines meets that once per
32 lines a user writes, where 16 met it twice, for up to 32 lines less context above (16 on average). A
window that holds fewer lines above its spot than twice the grid snaps to a finer one (16, 8, ...), so that
it keeps at least half of them."""


def _crop(text: str, spots: list[Spot], tokenizer: Any, budget: int) -> tuple[int, int]:
    """[start, end) of whole lines around the spots whose token count fits `budget`, about as much above as
    below, the start snapped down the file to the next line on the `START_GRID`."""
    lines = LineIndex(text)
    first = lines.line_of(spots[0].start)
    last = lines.line_of(max(spots[-1].end - 1, spots[-1].start))
    core_cost = sum(len(encode(tokenizer, text[s.end : t.start])) for s, t in itertools.pairwise(spots))
    core_cost += len(encode(tokenizer, text[lines.line_start(first) : spots[0].start]))
    core_cost += len(encode(tokenizer, text[spots[-1].end : lines.line_end(last, with_break=True)]))
    if core_cost > budget:
        raise ContextOverflow(
            f"the spots and the text between them take {core_cost} tokens, more than the {budget} the"
            " model's context leaves for them"
        )
    left = budget - core_cost
    above, below = first - 1, last + 1
    count = len(lines.starts)

    def line_cost(line: int) -> int:
        return len(encode(tokenizer, text[lines.line_start(line) : lines.line_end(line, with_break=True)]))

    open_above, open_below = above >= 0, below < count
    turn_above = True
    while open_above or open_below:
        side_above = open_above and (turn_above or not open_below)
        line = above if side_above else below
        cost = line_cost(line)
        if cost > left:
            open_above, open_below = (False, open_below) if side_above else (open_above, False)
            continue
        left -= cost
        if side_above:
            above -= 1
            open_above = above >= 0
        else:
            below += 1
            open_below = below < count
        turn_above = not side_above
    top = above + 1
    if top > 0:  # cropped above: start on the grid, and give the lines that frees to the text below
        grid = min(START_GRID, 1 << max(0, ((first - top) // 2).bit_length() - 1))  # keeps half the lines
        snapped = min(-(-top // grid) * grid, first)
        left += sum(line_cost(line) for line in range(top, snapped))
        top = snapped
        while below < count and (cost := line_cost(below)) <= left:
            left -= cost
            below += 1
    start = lines.line_start(top)
    end = lines.line_end(below - 1, with_break=True)
    return start, end
