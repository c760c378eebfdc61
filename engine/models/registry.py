"""Which family a checkpoint belongs to, decided from its config.json alone."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from engine.anchored_step import AnchoredPredictor
from engine.block_commit import BlockCommit
from engine.block_step import BlockPredictor
from engine.commit import InPlaceCommit, LeadingRunCommit
from engine.decoding import CommitPolicy, Predictor
from engine.full_attention import FullAttentionPredictor
from engine.models import anchored, dream, fast_dllm, llada, llada2, sdar
from engine.models.block import BlockDecoding
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
    reference rule; `block`: how a block-diffusion family's own sampler decodes a block; `reads_suffix`:
    a block-diffusion family reads the text after the last gap as a context block before the text before
    it (`engine/block_layout.py`); `max_right`: tokens of that text infill keeps (None: no limit);
    `mask_token`: the mask's text, when neither config nor tokenizer names it. A family run by its own
    library instead of the loop brings `load` (spec, folder, config, family, device, dtype -> LoadedModel)
    and `runner` (LoadedModel -> what `Engine` calls in place of `engine.denoise.Denoiser`)."""

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
    block: BlockDecoding | None = None
    reads_suffix: bool = False
    max_right: int | None = None
    mask_token: str | None = None
    load: Callable[..., Any] | None = None
    runner: Callable[[Any], Any] | None = None

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


def block_family(name: str, module: Any, model_class: type[Transformer]) -> Family:
    """A block-diffusion family: its model file's shape, names and sampler, over the block step."""
    return Family(name, module.LOGITS_SHIFTED, module.shape, module.rename, model_class, predictor=BlockPredictor,
                  commit=BlockCommit, left_to_right=True, block=module.DECODING, reads_suffix=READS_SUFFIX,
                  max_right=BLOCK_MAX_RIGHT if READS_SUFFIX else 0, mask_token=module.MASK_TOKEN)


# Measured (bench.block_suffix, README "Figures"): a causal model given the suffix as a context block first
# writes no better than from the prefix alone, and pays its prefill; so block families read the prefix only.
READS_SUFFIX = False
BLOCK_MAX_RIGHT = 256


def reading_suffix(family: Family, reads: bool) -> Family:
    """`family` reading the text after the last gap as a context block first, or not at all (block
    families; infill then keeps `BLOCK_MAX_RIGHT` tokens of it, or none)."""
    return dataclasses.replace(family, reads_suffix=reads, max_right=BLOCK_MAX_RIGHT if reads else 0)


def _gemma(name: str) -> Callable[..., Any]:
    """engine.diffusion_gemma's `name`, imported when first called (it imports transformers' model)."""

    def call(*args: Any) -> Any:
        from engine import diffusion_gemma

        return getattr(diffusion_gemma, name)(*args)

    return call


FAMILIES = {
    "dream": Family("dream", dream.LOGITS_SHIFTED, dream.DreamConfig.from_hf, dream.rename, dream.DreamModel),
    # LLaDA's sampler spreads the masks evenly over the steps and ranks confidences in float64.
    "llada": Family("llada", llada.LOGITS_SHIFTED, llada.shape, llada.rename, llada.LLaDAModel,
                    schedule=llada_schedule, reference_precision=torch.float64),
    # Base weights from a GGUF file plus adapter.safetensors (engine/anchored_load.py).
    "anchored": Family("anchored", anchored.LOGITS_SHIFTED, None, lambda name: name, anchored.AnchoredModel,
                       predictor=AnchoredPredictor, commit=LeadingRunCommit, left_to_right=True,
                       lookahead=anchored.LOOKAHEAD),
    "sdar": block_family("sdar", sdar, sdar.SDARModel),
    "fast_dllm": block_family("fast_dllm", fast_dllm, fast_dllm.FastDLLMModel),
    "llada2": block_family("llada2", llada2, llada2.LLaDA2Model),
    # transformers' DiffusionGemmaForBlockDiffusion and its generate (engine/diffusion_gemma.py).
    "diffusion_gemma": Family("diffusion_gemma", False, None, lambda name: name, Transformer,
                              reads_suffix=READS_SUFFIX, load=_gemma("load_diffusion_gemma"),
                              runner=_gemma("GemmaRunner")),
}

SUPPORTED = (
    'anchored family: model_type "anchored" (the bundled default: a GGUF base plus an adapter); '
    'Dream family: model_type "Dream" / architectures ["DreamModel"], or a Qwen2 config with mask_token_id '
    '(Dream-v0, Dream-Coder-v0, DiffuCoder, DreamOn, Open-dCoder); LLaDA family: model_type "llada" / '
    'architectures ["LLaDAModelLM"] (LLaDA-8B, LLaDA-1.5); block-diffusion families: model_type "sdar" '
    '(SDAR-1.7B/4B/8B-Chat), "Fast_dLLM_Qwen" (Fast-dLLM v2 1.5B/7B), "llada2_moe" (LLaDA2.0/2.1-mini/-flash); '
    'DiffusionGemma: model_type "diffusion_gemma" (run by transformers)'
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
    if model_type == "sdar":
        return FAMILIES["sdar"]
    if model_type == "fast_dllm_qwen":
        return FAMILIES["fast_dllm"]
    if model_type == "llada2_moe":
        return FAMILIES["llada2"]
    if model_type == "diffusion_gemma":
        return FAMILIES["diffusion_gemma"]
    if "LLaDAModelLM" in architectures or (model_type == "llada" and "d_model" in cfg and "n_experts" not in cfg):
        return FAMILIES["llada"]
    found = f"model_type {cfg.get('model_type')!r}, architectures {architectures}"
    raise UnsupportedModel(f"unsupported model ({found}); supported: {SUPPORTED}")
