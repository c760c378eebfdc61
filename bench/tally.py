"""What bench.quality accumulates per row: the filled documents and the model's cost per benchmark."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Filled:
    """A task's document after the completion is applied, and the text that was inserted."""

    document: str
    completion: str


@dataclass
class Cost:
    """Model cost of one benchmark's fills. `written` counts the tokens of the edits as applied (what the
    user gets, after post-processing), `new_tokens` every non-end token the engine generated."""

    new_tokens: int = 0
    written: int = 0
    forward_passes: int = 0
    seconds: float = 0.0
    fills: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.new_tokens + other.new_tokens, self.written + other.written,
                    self.forward_passes + other.forward_passes, self.seconds + other.seconds,
                    self.fills + other.fills)

    def report(self) -> dict:
        return {
            "new_tokens": self.new_tokens,
            "written_tokens": self.written,
            "forward_passes": self.forward_passes,
            "model_seconds": round(self.seconds, 3),
            "tokens_per_second": round(self.new_tokens / self.seconds, 2) if self.seconds else None,
            "written_per_second": round(self.written / self.seconds, 2) if self.seconds else None,
            "tokens_per_forward": round(self.new_tokens / max(1, self.forward_passes), 3),
            "written_per_forward": round(self.written / max(1, self.forward_passes), 3),
            "seconds_per_fill": round(self.seconds / max(1, self.fills), 4),
        }


@dataclass
class RowTally:
    """Per-row accumulators: model cost per benchmark and the filled tasks per benchmark."""

    no_spot: int = 0
    no_edit: int = 0
    retried: int = 0  # fills whose first result broke the parse, so a re-mask or ban round ran
    rescued: int = 0  # spots whose shown edit came from such a round (infill.FillResult.rescued)
    unbinding: int = 0  # fills with a result that parsed but unbound a name read after it (FillResult.unbinding)
    notes: Counter[str] = field(default_factory=Counter)
    filled: dict[str, list[Filled]] = field(default_factory=dict)
    cost: dict[str, Cost] = field(default_factory=dict)
    current: str = ""

    @property
    def now(self) -> Cost:
        return self.cost.setdefault(self.current, Cost())
