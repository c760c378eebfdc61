"""Which family a checkpoint belongs to, decided from its config.json alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from engine.anchored_step import AnchoredPredictor
from engine.commit import InPlaceCommit, LeadingRunCommit
from engine.decoding import CommitPolicy, Predictor
from engine.full_attention import FullAttentionPredictor
from engine.models import anchored, dream, llada
from engine.models.transformer import ModelShape, Transformer
from engine.policies import Schedule, dream_schedule, llada_schedule


class UnsupportedModel(ValueError):
    pass


@dataclass(frozen=True)
class Family:
    """What the engine knows of a family: how to build and load it, and the parts it plugs into the
    denoising loop (`engine.decoding`).

    `shape` builds the model's shape from config.json (None: the family loads its own way, as the anchored
    family from a GGUF base); `rename` maps checkpoint parameter names onto ours; `predictor` and `commit`
    are the family's step and commit policy; `left_to_right`: the family writes each span as a leading run
    (infill then starts and ends gaps at token boundaries); `lookahead`: the masks per span a step
    considers when `block` is 0; `schedule` and `reference_precision`: the family's own sampler, for the
    reference rule."""

    name: str
    shifted_logits: bool
    shape: Callable[[dict[str, Any]], ModelShape] | None
    rename: Callable[[str], str]
    model_class: type[Transformer]
    predictor: type[Predictor] = FullAttentionPredictor
    commit: type[CommitPolicy] = InPlaceCommit
    left_to_right: bool = False
    lookahead: int = 0
    schedule: Schedule = dream_schedule
    reference_precision: torch.dtype = torch.float32


FAMILIES = {
    "dream": Family("dream", dream.LOGITS_SHIFTED, dream.DreamConfig.from_hf, dream.rename, dream.DreamModel),
    # LLaDA's sampler spreads the masks evenly over the steps and ranks confidences in float64.
    "llada": Family("llada", llada.LOGITS_SHIFTED, llada.shape, llada.rename, llada.LLaDAModel,
                    schedule=llada_schedule, reference_precision=torch.float64),
    # Base weights from a GGUF file plus adapter.safetensors (engine/anchored_load.py).
    "anchored": Family("anchored", anchored.LOGITS_SHIFTED, None, lambda name: name, anchored.AnchoredModel,
                       predictor=AnchoredPredictor, commit=LeadingRunCommit, left_to_right=True,
                       lookahead=anchored.LOOKAHEAD),
}

SUPPORTED = (
    'anchored family: model_type "anchored" (the bundled default: a GGUF base plus an adapter); '
    'Dream family: model_type "Dream" / architectures ["DreamModel"], or a Qwen2 config with mask_token_id '
    '(Dream-v0, Dream-Coder-v0, DiffuCoder, DreamOn, Open-dCoder); LLaDA family: model_type "llada" / '
    'architectures ["LLaDAModelLM"] (LLaDA-8B, LLaDA-1.5)'
)


def family_of(cfg: dict[str, Any]) -> Family:
    model_type = str(cfg.get("model_type", "")).lower()
    architectures = [str(a) for a in cfg.get("architectures") or []]
    if model_type == "anchored":
        return FAMILIES["anchored"]
    if model_type == "dream" or "DreamModel" in architectures:
        return FAMILIES["dream"]
    if model_type == "qwen2" and cfg.get("mask_token_id") is not None:
        return FAMILIES["dream"]
    if "LLaDAModelLM" in architectures or (model_type == "llada" and "d_model" in cfg and "n_experts" not in cfg):
        return FAMILIES["llada"]
    found = f"model_type {cfg.get('model_type')!r}, architectures {architectures}"
    raise UnsupportedModel(f"unsupported model ({found}); supported: {SUPPORTED}")
