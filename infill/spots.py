"""The value types that cross infill's public API."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("line", "block")


@dataclass(frozen=True)
class Spot:
    """Replace `text[start:end]` (empty for an insertion) with `n_masks` tokens of generated text.

    `kind` is "line" (one line: the result is cut at its first line break) or "block" (several lines).
    `warning` explains a doubtful range (for example one that cuts through a function); the spot is
    still usable.
    """

    start: int
    end: int
    n_masks: int
    kind: str
    warning: str | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"spot range [{self.start}, {self.end}) is not a range")
        if self.n_masks < 1:
            raise ValueError(f"a spot needs at least one mask, got {self.n_masks}")
        if self.kind not in KINDS:
            raise ValueError(f"spot kind must be one of {KINDS}, got {self.kind!r}")


@dataclass(frozen=True)
class Edit:
    """Replace `text[start:end]` of the original text with `new_text` (generated from `token_ids`)."""

    start: int
    end: int
    new_text: str
    token_ids: tuple[int, ...]


def apply_edits(text: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """The text with every edit applied; edits must not overlap."""
    result = text
    previous_start = len(text) + 1
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        if edit.end > previous_start:
            raise ValueError(f"edits overlap at offset {edit.end}")
        result = result[: edit.start] + edit.new_text + result[edit.end :]
        previous_start = edit.start
    return result
