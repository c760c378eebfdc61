"""dcomplete's inference engine: diffusion LM checkpoints, the denoising loop and its policies.

Token ids in, token ids out; text, files and editors live in `infill` and `lsp_server`.
"""

from engine.denoise import InfillRequest, InfillResult, Span, Stats
from engine.engine import Engine
from engine.loader import ModelLoadError, SpecialTokens
from engine.params import DenoiseParams

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
