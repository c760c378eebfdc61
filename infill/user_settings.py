"""What a user's settings mean for the engine, decided once for every front door: the language server's
settings, the CLI's flags and the engine server's request fields all become `DenoiseParams` through
`denoise_params`, and a cap on the tokens of one completion becomes mask counts and growth through
`cap_tokens`. Each front door only names its own input in the errors these raise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from infill.spots import Spot

if TYPE_CHECKING:
    from engine.params import DenoiseParams

Preset = Literal["fast", "reference"]


def denoise_params(preset: Preset = "fast", **given: object) -> DenoiseParams:
    """`DenoiseParams.fast()` (confidence threshold, fixed-text cache) or `DenoiseParams.reference()` (the
    family's own schedule, no cache), with every field the user gave (None: not given, the preset's value).

    Raises ValueError with DenoiseParams' sentence for a bad value, and TypeError for a name that is not a
    field of DenoiseParams."""
    from engine.params import DenoiseParams  # here, not above: importing infill must not load torch

    base = DenoiseParams.reference() if preset == "reference" else DenoiseParams.fast()
    return base.with_(**{name: value for name, value in given.items() if value is not None})


def cap_tokens(jobs: Sequence[Sequence[Spot]], max_tokens: int | None) -> tuple[list[tuple[Spot, ...]], int | None]:
    """Each job's spots with at most `max_tokens` masks, and the growth (`FillOptions.max_grow`) that keeps
    a one-spot job within `max_tokens` written tokens in all: masks plus growth. Jobs with several spots
    keep infill's per-spot growth (None), as does no cap at all. Jobs filled in one call share the growth,
    so it is what the job with the most masks has left."""
    if max_tokens is None:
        return [tuple(spots) for spots in jobs], None
    capped = [
        tuple(s if s.n_masks <= max_tokens else dataclasses.replace(s, n_masks=max_tokens) for s in spots)
        for spots in jobs
    ]
    if not capped or any(len(spots) != 1 for spots in capped):
        return capped, None
    return capped, max(0, max_tokens - max(spots[0].n_masks for spots in capped))
