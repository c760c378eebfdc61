"""The families the engine runs, which one a checkpoint belongs to (decided from its config.json alone), and
`load`: a model spec to a `LoadedModel`, by the family's own loader or the generic one.

A family is a row of `FAMILIES` (`engine.denoise.seam.Family`): its network (`engine.models`), its loader and
the parts it plugs into the loop (a predictor and a commit policy, from this package). Adding a family is
adding a row here; `engine.loading` names no family.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import torch

from engine.denoise.policies import llada_schedule
from engine.denoise.seam import Family, LoadedModel, LoadSpec
from engine.families.anchored_load import load_anchored
from engine.families.anchored_step import AnchoredPredictor
from engine.families.block_commit import BlockCommit
from engine.families.block_step import BlockPredictor
from engine.families.commit import InPlaceCommit, LeadingRunCommit
from engine.families.full_attention import FullAttentionPredictor
from engine.loading.allocator import bound_kernel_caches, keep_freed_memory
from engine.loading.build import load_checkpoint
from engine.loading.checkpoint import CheckpointError, read_json
from engine.loading.devices import pick_device, pick_dtype
from engine.loading.folders import resolve_folder
from engine.models import anchored, dream, fast_dllm, llada, llada2, sdar
from engine.models.transformer import Transformer
from engine.types import ModelLoadError


class UnsupportedModel(ValueError):
    pass


def block_family(name: str, module: Any, model_class: type[Transformer]) -> Family:
    """A block-diffusion family: its model file's shape, names and sampler, over the block step."""
    return Family(name, module.LOGITS_SHIFTED, module.shape, module.rename, model_class, BlockPredictor, BlockCommit,
                  left_to_right=True, block=module.DECODING, reads_suffix=READS_SUFFIX,
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
    """engine.families.diffusion_gemma's `name`, imported when first called (it imports transformers' model)."""

    def call(*args: Any) -> Any:
        from engine.families import diffusion_gemma

        return getattr(diffusion_gemma, name)(*args)

    return call


FAMILIES = {
    "dream": Family("dream", dream.LOGITS_SHIFTED, dream.DreamConfig.from_hf, dream.rename, dream.DreamModel,
                    FullAttentionPredictor, InPlaceCommit),
    # LLaDA's sampler spreads the masks evenly over the steps and ranks confidences in float64.
    "llada": Family("llada", llada.LOGITS_SHIFTED, llada.shape, llada.rename, llada.LLaDAModel,
                    FullAttentionPredictor, InPlaceCommit, schedule=llada_schedule,
                    reference_precision=torch.float64),
    # Base weights from a GGUF file plus adapter.safetensors (engine/families/anchored_load.py).
    "anchored": Family("anchored", anchored.LOGITS_SHIFTED, None, lambda name: name, anchored.AnchoredModel,
                       AnchoredPredictor, LeadingRunCommit, left_to_right=True, lookahead=anchored.LOOKAHEAD,
                       load=load_anchored),
    "sdar": block_family("sdar", sdar, sdar.SDARModel),
    "fast_dllm": block_family("fast_dllm", fast_dllm, fast_dllm.FastDLLMModel),
    "llada2": block_family("llada2", llada2, llada2.LLaDA2Model),
    # transformers' DiffusionGemmaForBlockDiffusion and its generate (engine/families/diffusion_gemma.py).
    "diffusion_gemma": Family("diffusion_gemma", False, None, lambda name: name, Transformer,
                              FullAttentionPredictor, InPlaceCommit, reads_suffix=READS_SUFFIX,
                              load=_gemma("load_diffusion_gemma"), runner=_gemma("GemmaRunner")),
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


def load(spec: str | os.PathLike[str] = "default", device: str | None = None, dtype: str | None = None) -> LoadedModel:
    """The model `spec` names (the bundled default, a folder, or a Hugging Face repo id) on `device`, computing
    in `dtype` (None: the engine's choice); a spec that cannot load raises `ModelLoadError` naming it."""
    folder = resolve_folder(spec)
    try:
        cfg = read_json(folder / "config.json")
        family = family_of(cfg)
    except (CheckpointError, ValueError) as exc:
        raise ModelLoadError(f"model {spec}: {exc}") from None
    dev = pick_device(device)
    dt = pick_dtype(dtype, dev)
    if dev.type == "cpu":
        keep_freed_memory()
        bound_kernel_caches()
    return (family.load or load_checkpoint)(LoadSpec(str(spec), folder, cfg, dev, dt, dtype), family)
