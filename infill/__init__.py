"""Text side of dcomplete: edit windows, canvases, post-processing; the front doors (`lsp_server`, `cli`,
`remote`) call it.

Positions are `str` offsets into the document; `infill.positions` converts to and from LSP.
"""

from infill.fill import FillJob, FillOptions, FillResult, fill, fill_many, warm
from infill.holes import find_holes
from infill.languages import LANGUAGES, LanguageSpec, get_language, language_for_path
from infill.spots import Edit, Spot, apply_edits
from infill.windows import plan_completion, plan_regenerate

__all__ = [
    "LANGUAGES",
    "Edit",
    "FillJob",
    "FillOptions",
    "FillResult",
    "LanguageSpec",
    "Spot",
    "apply_edits",
    "fill",
    "fill_many",
    "find_holes",
    "get_language",
    "language_for_path",
    "plan_completion",
    "plan_regenerate",
    "warm",
]
