"""The family seam: what a model family plugs into the one denoising loop (`engine/denoise.py`).

A family (`engine.models.registry.Family`) brings two parts, built per run from the loaded model, the
first batch and the run's `DenoiseParams`:

- a `Predictor`: what a step runs through the model and what it caches (full-attention families in
  `engine/full_attention.py`, the anchored family in `engine/anchored_step.py`, block-diffusion families
  in `engine/block_step.py`);
- a `CommitPolicy`: which masked positions a step may write and what it writes there (`engine/commit.py`:
  in place for full-attention families, leading runs for families that write left to right;
  `engine/block_commit.py`: the current block, for block-diffusion families).

The loop never asks which family it runs. It owns the canvases (`CanvasBatch`), proposals (`propose`),
span growth and rows joining or leaving; the two parts own everything else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import torch

if TYPE_CHECKING:
    from engine.canvas_batch import CanvasBatch
    from engine.doc_cache import DocKV
    from engine.loader import LoadedModel, SpecialTokens
    from engine.loop_state import LoopRows
    from engine.params import DenoiseParams


class Predictor(Protocol):
    """Logits for the positions a step reads, from whatever the family caches between steps.

    Invariants the loop relies on:
    - rows are independent: a row's logits depend on that row's canvas alone, whatever it is batched
      with, so a request gets the same tokens alone or in a batch, and rows can join and leave;
    - a row that left the batch (`batch.live` False) and a row with no masks are never computed;
    - fixed text is never written; `predict` only reads `batch` and updates the predictor's own cache;
    - `keep` returns K/V that a later `warm` for the same document may reuse, or None.
    """

    def __init__(self, loaded: LoadedModel, batch: CanvasBatch, params: DenoiseParams) -> None: ...

    def warm(self, old: DocKV, batch: CanvasBatch) -> None:
        """Reuse `old` (the last canvas of this document) for row 0 before the first step."""
        ...

    def predict(self, batch: CanvasBatch, targets: torch.Tensor,
                changed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (M, V) for the `targets` (B, L) positions in `targets.nonzero()` order, canvas positions
        run per row (B,) on the CPU). `changed` (B, L): positions whose ids the last step wrote."""
        ...

    def grew(self, batch: CanvasBatch, b: int, span: int, n: int) -> None:
        """`n` masks were inserted at the end of span `span` of row `b` (the batch may be wider)."""
        ...

    def add_rows(self, n: int) -> None:
        """`n` rows were appended to the batch, with nothing cached."""
        ...

    def keep_rows(self, rows: list[int]) -> None:
        """Only `rows`, in that order, stay in the batch."""
        ...

    def keep(self, batch: CanvasBatch) -> DocKV | None:
        """What to keep of row 0 for the document's next request, after the run."""
        ...


class CommitPolicy(Protocol):
    """Which masked positions a step proposes for, and which proposals it writes.

    Invariants: only masks (and, for policies that draft, the drafts they wrote) are ever written; every
    step writes at least one token in each open span of every live row (a block-diffusion policy, which
    writes a row's gaps one after the other, in its first open span), so a run ends; an end token written
    into a span makes the rest of that span end tokens when the policy fills after ends.
    """

    precision: torch.dtype
    """The dtype proposals and confidences are computed in (float64 reproduces LLaDA's sampler)."""

    def __init__(self, loaded: LoadedModel, params: DenoiseParams, special: SpecialTokens) -> None: ...

    def begin(self, batch: CanvasBatch) -> None:
        """Prepare a new batch (or the rows just appended to it)."""
        ...

    def targets(self, batch: CanvasBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """(candidates, targets), each (B, L): the masks this step may commit, and every position whose
        proposal the step reads (the candidates, plus drafts to verify)."""
        ...

    def commit(self, batch: CanvasBatch, candidates: torch.Tensor, targets: torch.Tensor, tokens: torch.Tensor,
               score: torch.Tensor, rows: LoopRows) -> torch.Tensor:
        """The batch's new ids (B, L), given a token and a score (M,) for each target position."""
        ...
