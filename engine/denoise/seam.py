"""The family seam: what a model family plugs into the one denoising loop (`engine/denoise/loop.py`), and the
two records both sides name: the `Family` row (`engine.families.registry` holds the table) and the
`LoadedModel` a load returns.

A family brings two parts, built per run from the loaded model, the
first batch and the run's `DenoiseParams`:

- a `Predictor`: what a step runs through the model and what it caches (full-attention families in
  `engine/families/full_attention.py`, the anchored family in `engine/families/anchored_step.py`, block-diffusion families
  in `engine/families/block_step.py`);
- a `CommitPolicy`: which masked positions a step may write and what it writes there (`engine/families/commit.py`:
  in place for full-attention families, leading runs for families that write left to right;
  `engine/families/block_commit.py`: the current block, for block-diffusion families).

The loop never asks which family it runs. It owns the canvases (`CanvasBatch`), proposals (`propose`),
span growth and rows joining or leaving; the two parts own everything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import torch

from engine.denoise.drafting import DraftPolicy
from engine.denoise.policies import Schedule, dream_schedule
from engine.kernels.calibration import UNMEASURED, Calibration, PendingCalibration
from engine.models.block import BlockDecoding
from engine.models.transformer import ModelShape, Transformer
from engine.types import SpecialTokens

if TYPE_CHECKING:
    from engine.cache.doc_cache import DocKV
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.denoise.rows import LoopRows
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

    def warm(self, old: DocKV, batch: CanvasBatch, b: int) -> None:
        """Reuse `old` (the last canvas of this document) for row `b` before its first step."""
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

    def keep(self, batch: CanvasBatch, b: int) -> DocKV | None:
        """What to keep of row `b` for the document's next request, once the row is done."""
        ...


class CommitPolicy(Protocol):
    """Which masked positions a step proposes for, and which proposals it writes.

    Invariants: only masks (and, for policies that draft, the drafts they wrote; for the block families, the
    row's `pads` after its canvas, `engine.denoise.canvas_batch`) are ever written; every step writes at least
    one token in each open span of every live row (a block-diffusion policy, which writes a row's gaps one
    after the other, in its first open span), so a run ends; an end token written into a span makes the rest
    of that span end tokens when the policy fills after ends.
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


@dataclass(frozen=True)
class LoadSpec:
    """What a family's loader is given: `spec` as the user gave it (errors name it), the checkpoint's
    `folder` and `config` (config.json), the `device` and compute `dtype`, and the dtype `asked` for (None or
    "auto": the engine picks the kernels, `engine.loading.build.fit`)."""

    spec: str
    folder: Path
    config: dict[str, Any]
    device: torch.device
    dtype: torch.dtype
    asked: str | None


@dataclass(frozen=True)
class Family:
    """What the engine knows of a family: how to build and load it, and the parts it plugs into the loop.

    `shape` builds the model's shape from config.json (None: the family loads its own way, as the anchored
    family from a GGUF base); `rename` maps checkpoint parameter names onto ours; `predictor` and `commit`
    are the family's step and commit policy; `left_to_right`: the family writes each span as a leading run
    (infill then starts and ends gaps at token boundaries); `lookahead`: the masks per span a step
    considers when `block` is 0; `schedule` and `reference_precision`: the family's own sampler, for the
    reference rule; `block`: how a block-diffusion family's own sampler decodes a block; `reads_suffix`:
    a block-diffusion family reads the text after the last gap as a context block before the text before
    it (`engine/families/block_layout.py`); `max_right`: tokens of that text infill keeps (None: no limit);
    `mask_token`: the mask's text, when neither config nor tokenizer names it. `load`: the family's own
    loader (None: a safetensors checkpoint by `shape` and `rename`, `engine.loading.build.load_checkpoint`);
    `runner`: for a family run by its own library, what `Engine` calls in place of the loop
    (`engine.denoise.loop.Denoiser`)."""

    name: str
    shifted_logits: bool
    shape: Callable[[dict[str, Any]], ModelShape] | None
    rename: Callable[[str], str]
    model_class: type[Transformer]
    predictor: type[Predictor]
    commit: type[CommitPolicy]
    left_to_right: bool = False
    lookahead: int = 0
    schedule: Schedule = dream_schedule
    reference_precision: torch.dtype = torch.float32
    block: BlockDecoding | None = None
    reads_suffix: bool = False
    max_right: int | None = None
    mask_token: str | None = None
    load: Callable[[LoadSpec, Family], LoadedModel] | None = None
    runner: Callable[[LoadedModel], Any] | None = None

    def token_config(self, cfg: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
        """config.json with the mask id the family's tokenizer names by `mask_token` when neither the
        config nor the tokenizer's `mask_token` gives one (Fast-dLLM v2's mask is a plain added token)."""
        if self.mask_token is None or cfg.get("mask_token_id") is not None or tokenizer is None:
            return cfg
        if getattr(tokenizer, "mask_token_id", None) is not None:
            return cfg
        found = tokenizer.convert_tokens_to_ids(self.mask_token)
        if found is None or found == getattr(tokenizer, "unk_token_id", None):
            return cfg
        return {**cfg, "mask_token_id": found}


@dataclass
class LoadedModel:
    """A model ready to denoise: its family, network, tokenizer and special tokens, where it runs, and
    `calibration`: what this machine runs fastest for the model (`engine.loading.calibrate`), applied;
    `pending`: its measurement, when the load applied a default calibration until it is done
    (`engine.loading.tuning`)."""

    folder: Path
    family: Family
    model: Transformer
    tokenizer: Any
    special: SpecialTokens
    max_length: int
    device: torch.device
    dtype: torch.dtype
    calibration: Calibration = UNMEASURED
    pending: PendingCalibration | None = None
    kv_dtype: torch.dtype | None = None
    """The dtype the family's decoding cache keeps keys and values in (`engine.cache.kv_dtype`); None:
    `dtype`."""
    drafting: DraftPolicy = field(init=False)

    def __post_init__(self) -> None:
        self.drafting = DraftPolicy(self.calibration.row_cost, max(1, self.family.lookahead))
