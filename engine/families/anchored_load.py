"""Loading an anchored model (the bundled default): the GGUF base (engine.loading.gguf_base) plus the folder's
adapter, or a fresh adapter for training; the tokenizer comes with the base."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import torch
from torch import nn

from engine.cache.kv_dtype import kv_dtype
from engine.denoise.seam import Family, LoadedModel, LoadSpec
from engine.loading import native_build, prepared
from engine.loading.build import CONTEXT_CAP, fit, gguf_blocks
from engine.loading.checkpoint import CheckpointError, assign_weights, read_safetensors
from engine.loading.devices import engine_choice
from engine.loading.gguf_base import GGUFError, base_folder, read_shape, read_state
from engine.loading.tokenizer import fast_tokenizer
from engine.models.anchored import CLOSED, Adapter, AdapterShape, AnchoredModel
from engine.models.transformer import on_meta
from engine.types import ModelLoadError, SpecialTokens

ADAPTER_FILE = "adapter.safetensors"


def adapter_shape(cfg: dict[str, Any]) -> AdapterShape:
    a = cfg.get("adapter", {})
    return AdapterShape(rank=int(a.get("rank", 16)), alpha=float(a.get("alpha", 32.0)),
                        gap_room=int(a.get("gap_room", 256)), max_right=int(a.get("max_right", 256)))


def build_anchored(base: str, shape: AdapterShape, device: torch.device, dtype: torch.dtype,
                   adapter_file: Path | None = None) -> tuple[AnchoredModel, Path]:
    """The model with base weights loaded and frozen, and the adapter from `adapter_file` (or freshly
    initialised: LoRA B = 0, mask embedding = the mean token embedding); returns the base cache folder too
    (it holds the tokenizer)."""
    folder = base_folder(base)
    base_shape = read_shape(folder)
    model = on_meta(lambda: AnchoredModel(base_shape, shape))
    assign_weights(model, read_state(folder).items(), lambda name: name, device, dtype, skip="adapter.")
    with torch.device(device):  # built where it runs: a meta module's to_empty is slow (400 small tensors)
        model.adapter = Adapter(base_shape, shape)
    init_adapter(model)
    if adapter_file is not None:
        state = read_safetensors(adapter_file, device)
        missing, unexpected = model.adapter.load_state_dict(state, strict=False)
        if missing or unexpected:
            from engine.loading.checkpoint import CheckpointError

            raise CheckpointError(f"{adapter_file}: adapter does not fit the model (missing {len(missing)},"
                                  f" unexpected {len(unexpected)} tensors, e.g. {(missing + unexpected)[0]})")
    model.adapter.to(dtype)
    for p in model.parameters():
        p.requires_grad_(False)
    return model, folder


def meta_anchored(base: Path, shape: AdapterShape) -> AnchoredModel:
    """The model of base cache folder `base` with an adapter of `shape`, every tensor on the meta device
    (for `engine.loading.prepared` to fill)."""
    return on_meta(lambda: AnchoredModel(read_shape(base), shape))


def init_adapter(model: AnchoredModel) -> None:
    adapter = model.adapter
    with torch.no_grad():
        adapter.mask_embed.copy_(model.model.embed_tokens.weight.float().mean(0))
        adapter.right_bias.fill_(CLOSED)
        for i, layer in enumerate(adapter.layers):
            for lora in (adapter.lora(i, name) for name in cast(nn.ModuleDict, layer)):
                torch.nn.init.normal_(lora.A, std=lora.A.shape[1] ** -0.5)
                torch.nn.init.zeros_(lora.B)


def load_anchored(spec: LoadSpec, family: Family) -> LoadedModel:
    """A GGUF base (`config["base"]`) plus the folder's adapter, from the prepared file when one was kept."""
    cfg, dev, dtype = spec.config, spec.device, spec.asked
    adapter = spec.folder / ADAPTER_FILE
    native = dev.type == "cpu" and engine_choice(dtype)
    if native:  # a first load compiles the kernels while it reads the GGUF file
        native_build.start_builds(int4=native_build.int4_offered())
    try:
        base = base_folder(str(cfg["base"]))
        shape = adapter_shape(cfg)
        kept = prepared.load_path(dev, dtype, [spec.folder / "config.json", base / "config.json",
                                               adapter if adapter.exists() else None])
        restored = prepared.restored(kept, lambda: meta_anchored(base, shape))
        if restored is None:
            model, base = build_anchored(str(cfg["base"]), shape, dev, spec.dtype, adapter)
    except (GGUFError, CheckpointError) as exc:
        raise ModelLoadError(f"model {spec.spec}: {exc}") from None
    except KeyError as exc:
        raise ModelLoadError(f"model {spec.spec}: config.json has no {exc}") from None
    tokenizer = fast_tokenizer(spec.spec, base)
    pending = None
    if restored is not None:
        model, calibration = restored  # type: ignore[assignment]
    if native:
        native_build.install(model)  # before a calibration times the decoding steps
    if restored is None:
        calibration, pending = fit(model, dtype, dev, gguf_blocks(base, dev, dtype),
                                   lambda found: prepared.keep(kept, model, found))
    max_length = min(int(cfg.get("context", cfg.get("max_position_embeddings", 4096))), CONTEXT_CAP)
    eos = int(cfg.get("eos_token_id", 0))
    special = SpecialTokens(mask_id=model.mask_id, eos_id=eos, pad_id=int(cfg.get("pad_token_id", eos)),
                            bos_id=int(cfg.get("bos_token_id", eos)))
    return LoadedModel(spec.folder, family, model, tokenizer, special, max_length, dev, spec.dtype, calibration,
                       pending, kv_dtype(dev, spec.dtype) if engine_choice(dtype) else None)
