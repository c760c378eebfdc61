"""The values that cross the engine's public API: a canvas to fill, its constraints, its result, the loop's
counts, the checkpoint's special tokens and the error a spec that cannot load raises. Torch-free: the layers
above (infill, the front doors) import these without loading torch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol


class ModelLoadError(ValueError):
    """A model spec that cannot be loaded; the message names the spec and the reason."""


@dataclass(frozen=True)
class SpecialTokens:
    mask_id: int
    eos_id: int
    pad_id: int
    bos_id: int

    @property
    def end_ids(self) -> frozenset[int]:
        """Ids that end a span: the model fills unused mask slots with them."""
        return frozenset({self.eos_id, self.pad_id})


class Lead(Protocol):
    """Text a span must start with, as a constraint on its first tokens (built by infill, which knows the
    tokenizer; the engine only sees ids)."""

    @property
    def text(self) -> str:
        """The text itself (what a remote engine is sent)."""
        ...

    def allowed(self, written: Sequence[int]) -> frozenset[int] | None:
        """The ids that may follow `written` (the span's first tokens); None once the text is complete."""
        ...


class SpanEnd(Protocol):
    """When a span written left to right is complete by what its text says (built by infill from its
    post-processing: a line that leaves the block, a loop, the text after the gap written again), so the
    engine stops writing text that would be cut anyway; the engine only sees ids."""

    def reached(self, written: Sequence[int]) -> bool:
        """Whether the span's first tokens, `written`, already hold all of it that will be kept."""
        ...

    def may_end(self, written: Sequence[int]) -> bool:
        """Whether the span may end right after `written` (an end token, or one of its stops, written next):
        False where its text would stop short of what more text completes (an open bracket, a block header
        without its body), so the engine writes its best other token there instead. It reads `written` alone,
        as `reached` does, so a step that drafts decides as one that writes a token at a time."""
        ...



class Reference(Protocol):
    """The text a span replaces, for a span whose result is compared with it (a next edit: is the region worth
    changing?). Built by infill, which knows the tokenizer; the engine only sees ids. At the first token a
    span writes that does not keep the text, the engine notes the span's `margin`."""

    @property
    def text(self) -> str:
        """The text itself (what a remote engine is sent)."""
        ...

    def follows(self, written: Sequence[int], token: int) -> bool:
        """Whether `token`, after the span's first tokens `written` (which keep the text), still keeps it; an
        end token keeps it only when the text is complete."""
        ...

    def alternatives(self, written: Sequence[int]) -> frozenset[int]:
        """The ids that keep the text after `written`; empty when the text is complete (an end keeps it)."""
        ...


@dataclass
class Stats:
    """`positions`: canvas positions run through the model, over all steps (the compute a cache saves).
    `prompt_positions` and `prompt_seconds`: the positions and the time of the row's first step, which
    evaluates the canvas's text (all of it but what a document's cache supplied) and writes the first
    token; `step_seconds`: the time of every step the row took part in, the first included."""

    new_tokens: int = 0
    forward_passes: int = 0
    seconds: float = 0.0
    positions: int = 0
    prompt_positions: int = 0
    prompt_seconds: float = 0.0
    step_seconds: float = 0.0

    @property
    def tokens_per_forward(self) -> float:
        return self.new_tokens / self.forward_passes if self.forward_passes else 0.0

    def add(self, other: Stats) -> Stats:
        return Stats(self.new_tokens + other.new_tokens, self.forward_passes + other.forward_passes,
                     self.seconds + other.seconds, self.positions + other.positions,
                     self.prompt_positions or other.prompt_positions, self.prompt_seconds or other.prompt_seconds,
                     self.step_seconds + other.step_seconds)


@dataclass(frozen=True)
class Span:
    """Canvas positions [start, end) and the ids written there. `margin`, for a span given a reference
    (`InfillRequest.span_refs`): at the first token that did not keep the reference's text, the model's
    log-probability of that token minus the best log-probability of a token that kept it (0.0 when that
    token was written without a forward of its own, as an end run); None when the span kept the text.
    `rival_margin`, for a span also given a rival text (`InfillRequest.span_rivals`) that the span's tokens
    before that point still spelled: at the same point, the best log-probability of a token that keeps the
    rival minus the best one that keeps the reference (the model's preference between the two texts)."""

    start: int
    end: int
    token_ids: list[int]
    margin: float | None = None
    rival_margin: float | None = None


@dataclass(frozen=True)
class InfillRequest:
    """`span_stops[i]`: tokens that end span i as an end token does (with fill_after_eos the masks after
    the first one become end tokens, and the span does not grow), e.g. the line breaks of a one-line
    completion, whose text after the first line break is never used. Missing entries stop nothing.

    `span_leads[i]`: text span i must start with, as a token constraint (`Lead`): the text
    infill took off the end of the prefix so that the gap starts at a token boundary the tokenizer
    produces. While it is unfinished the span's first mask is its only candidate, and stop tokens count
    only after it.

    `span_ends[i]`: for a left-to-right family, when span i's text is complete (`SpanEnd`):
    its masks then become end tokens, as after an end token; and where it may not end yet (its end tokens
    and stops are barred there).

    `span_refs[i]`: the text span i replaces (`Reference`); its result's `Span.margin` says how much the
    model preferred writing something else; `span_rivals[i]`: another text for span i (a rule's proposal),
    weighed against the reference at the same point (`Span.rival_margin`). Compared token by token from the span's start, as a family that
    writes left to right commits them (a family that commits in place gives a margin only where the tokens
    before the first difference were committed first).

    `cancel`: polled before every step while the row still has masks; once it returns True the row leaves
    the batch (it is no longer computed) and the other rows go on. Its result is `cancelled`, with the
    tokens committed so far and masks where none was."""

    canvas: list[int]
    doc_id: str | None = None
    max_grow: int = 0
    span_stops: tuple[frozenset[int], ...] = ()
    span_leads: tuple[Lead | None, ...] = ()
    span_ends: tuple[SpanEnd | None, ...] = ()
    cancel: Callable[[], bool] | None = None
    span_refs: tuple[Reference | None, ...] = ()
    span_rivals: tuple[Reference | None, ...] = ()


@dataclass
class InfillResult:
    canvas: list[int]
    spans: list[Span]
    stats: Stats = field(default_factory=Stats)
    cancelled: bool = False
