"""dcomplete's inference engine: diffusion LM checkpoints, the denoising loop and its policies.

Token ids in, token ids out; text, files and editors live in `infill` and `lsp_server`. The package's front
is what the layers above use: the records (`engine.types`, `engine.params`), the contract infill is typed
against (`engine.api.EngineLike`), `Engine` and `engine.batcher.Batcher`. Importing the records loads no
torch: `Engine` is imported when first named. ARCHITECTURE.md has the sub-packages behind it, in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.params import DenoiseParams
from engine.types import InfillRequest, InfillResult, ModelLoadError, Span, SpecialTokens, Stats

if TYPE_CHECKING:
    from engine.engine import Engine

__all__ = [
    "DenoiseParams",
    "Engine",
    "InfillRequest",
    "InfillResult",
    "ModelLoadError",
    "Span",
    "SpecialTokens",
    "Stats",
]


def __getattr__(name: str) -> Any:
    if name == "Engine":
        from engine.engine import Engine

        return Engine
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
