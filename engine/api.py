"""What the layers above the engine may rely on: the engine interface infill is typed against.

Three classes implement it: `engine.Engine` (a model in this process), `engine.batcher.Batcher` (one engine
shared by many threads) and the remote client of `dcomplete engine`. All three carry the same
`ModelTraits` (read once from the loaded model, or from the engine server's `/v1/engine`), declared here
once through `WithTraits`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engine.params import DenoiseParams
from engine.types import InfillRequest, InfillResult, SpecialTokens


@dataclass(frozen=True)
class ModelTraits:
    """What infill must know of the model behind an engine to build canvases for it.

    `left_to_right`: spans are written left to right by a causal base (token by token, or block by block),
    so canvases must start and end gaps at token boundaries the tokenizer produces (infill's `heal`) and a
    greedy rerun writes the same;
    `max_right`: tokens of text after the last gap the model reads (None: as much as fits)."""

    tokenizer: Any  # a transformers tokenizer (untyped)
    special: SpecialTokens
    max_length: int
    left_to_right: bool
    max_right: int | None


class EngineLike(Protocol):
    @property
    def tokenizer(self) -> Any: ...

    @property
    def special(self) -> SpecialTokens: ...

    @property
    def max_length(self) -> int: ...

    @property
    def left_to_right(self) -> bool: ...

    @property
    def max_right(self) -> int | None: ...

    def infill(self, requests: Sequence[InfillRequest], params: DenoiseParams | None = None,
               cancel: Callable[[], bool] | None = None) -> list[InfillResult]:
        """Fill every mask of every canvas (ARCHITECTURE.md has the contract)."""
        ...

    def warm(self, requests: Sequence[InfillRequest], params: DenoiseParams | None = None) -> bool:
        """Prepare the documents' caches for these canvases without filling them (may do nothing); whether
        it did."""
        ...


class WithTraits:
    """`EngineLike`'s attributes, read from `self.traits`."""

    traits: ModelTraits

    @property
    def tokenizer(self) -> Any:
        return self.traits.tokenizer

    @property
    def special(self) -> SpecialTokens:
        return self.traits.special

    @property
    def max_length(self) -> int:
        return self.traits.max_length

    @property
    def left_to_right(self) -> bool:
        return self.traits.left_to_right

    @property
    def max_right(self) -> int | None:
        return self.traits.max_right
