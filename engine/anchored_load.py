"""Building an anchored model: the GGUF base (engine.gguf_base) plus an adapter folder or a fresh adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import torch
from torch import nn

from engine.gguf_base import base_folder, read_shape, read_state
from engine.models.anchored import Adapter, AdapterShape, AnchoredModel
from engine.models.transformer import on_meta

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
    from engine.checkpoint import assign_weights

    folder = base_folder(base)
    base_shape = read_shape(folder)
    model = on_meta(lambda: AnchoredModel(base_shape, shape))
    assign_weights(model, read_state(folder).items(), lambda name: name, device, dtype, skip="adapter.")
    with torch.device(device):  # built where it runs: a meta module's to_empty is slow (400 small tensors)
        model.adapter = Adapter(base_shape, shape)
    init_adapter(model)
    if adapter_file is not None:
        from engine.checkpoint import read_safetensors

        state = read_safetensors(adapter_file, device)
        missing, unexpected = model.adapter.load_state_dict(state, strict=False)
        if missing or unexpected:
            from engine.checkpoint import CheckpointError

            raise CheckpointError(f"{adapter_file}: adapter does not fit the model (missing {len(missing)},"
                                  f" unexpected {len(unexpected)} tensors, e.g. {(missing + unexpected)[0]})")
    model.adapter.to(dtype)
    for p in model.parameters():
        p.requires_grad_(False)
    return model, folder


def meta_anchored(base: Path, shape: AdapterShape) -> AnchoredModel:
    """The model of base cache folder `base` with an adapter of `shape`, every tensor on the meta device
    (for `engine.prepared` to fill)."""
    return on_meta(lambda: AnchoredModel(read_shape(base), shape))


def init_adapter(model: AnchoredModel) -> None:
    from engine.models.anchored import CLOSED

    adapter = model.adapter
    with torch.no_grad():
        adapter.mask_embed.copy_(model.model.embed_tokens.weight.float().mean(0))
        adapter.right_bias.fill_(CLOSED)
        for i, layer in enumerate(adapter.layers):
            for lora in (adapter.lora(i, name) for name in cast(nn.ModuleDict, layer)):
                torch.nn.init.normal_(lora.A, std=lora.A.shape[1] ** -0.5)
                torch.nn.init.zeros_(lora.B)
