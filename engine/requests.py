"""The values that cross the engine's public API: a canvas to fill, its result and the loop's counts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine.canvas_batch import Lead, SpanEnd


@dataclass
class Stats:
    """`positions`: canvas positions run through the model, over all steps (the compute a cache saves);
    `prefill_seconds`: the row's first step (its fixed text, or what its document's cache lacked, and the
    first proposal), part of `seconds`."""

    new_tokens: int = 0
    forward_passes: int = 0
    seconds: float = 0.0
    positions: int = 0
    prefill_seconds: float = 0.0

    @property
    def tokens_per_forward(self) -> float:
        return self.new_tokens / self.forward_passes if self.forward_passes else 0.0

    def add(self, other: Stats) -> Stats:
        return Stats(self.new_tokens + other.new_tokens, self.forward_passes + other.forward_passes,
                     self.seconds + other.seconds, self.positions + other.positions,
                     self.prefill_seconds + other.prefill_seconds)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    token_ids: list[int]


@dataclass(frozen=True)
class InfillRequest:
    """`span_stops[i]`: tokens that end span i as an end token does (with fill_after_eos the masks after
    the first one become end tokens, and the span does not grow), e.g. the line breaks of a one-line
    completion, whose text after the first line break is never used. Missing entries stop nothing.

    `span_leads[i]`: text span i must start with, as a token constraint (`canvas_batch.Lead`): the text
    infill took off the end of the prefix so that the gap starts at a token boundary the tokenizer
    produces. While it is unfinished the span's first mask is its only candidate, and stop tokens count
    only after it.

    `span_ends[i]`: for a left-to-right family, when span i's text is complete (`canvas_batch.SpanEnd`):
    its masks then become end tokens, as after an end token.

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


@dataclass
class InfillResult:
    canvas: list[int]
    spans: list[Span]
    stats: Stats = field(default_factory=Stats)
    cancelled: bool = False
