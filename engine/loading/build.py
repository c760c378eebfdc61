"""A checkpoint folder to a ready model: the generic load of a safetensors checkpoint, and `fit`, the last step
of every load on our own networks (fuse for inference, swap in the kernels this machine can run, apply the
calibration)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from engine.denoise.seam import Family, LoadedModel, LoadSpec
from engine.kernels.block_products import Blocks
from engine.kernels.calibration import UNMEASURED, Calibration, PendingCalibration
from engine.loading.checkpoint import CheckpointError, load_weights, weight_files
from engine.loading.devices import INT8, engine_choice
from engine.loading.tokenizer import load_tokenizer, special_tokens
from engine.models.transformer import Transformer, on_meta
from engine.types import ModelLoadError

# Full-attention dLLMs recompute the whole canvas; their long-context configs (131072 for Dream) are
# inherited from the AR base, not what they were trained on, so the usable context is capped.
CONTEXT_CAP = 4096


def load_checkpoint(spec: LoadSpec, family: Family) -> LoadedModel:
    """A safetensors checkpoint of a family the project implements (`family.shape`, `family.rename`)."""
    assert family.shape is not None, f"family {family.name} loads its own way"
    try:
        files = weight_files(spec.folder)
    except CheckpointError as exc:
        raise ModelLoadError(f"model {spec.spec}: {exc}") from None
    tokenizer = load_tokenizer(spec.spec, spec.folder)
    shape = family.shape(spec.config)
    model = on_meta(lambda: family.model_class(shape))
    try:
        load_weights(model, files, family.rename, spec.device, spec.dtype)
    except CheckpointError as exc:
        raise ModelLoadError(f"model {spec.spec}: {exc}") from None
    calibration, pending = fit(model, spec.asked, spec.device)
    max_length = min(int(shape.max_position_embeddings), CONTEXT_CAP)
    special = special_tokens(family.token_config(spec.config, tokenizer), tokenizer, spec.folder)
    return LoadedModel(spec.folder, family, model, tokenizer, special, max_length, spec.device, spec.dtype,
                       calibration, pending)


def gguf_blocks(base: Path, device: torch.device, dtype: str | None) -> dict[str, Blocks] | None:
    """The GGUF base's own 4- and 8-bit blocks, when a kernel can run them here (`engine.kernels.block_products`,
    `engine.kernels.int4_product`)."""
    from engine.kernels import block_products
    from engine.loading.native_build import int4_offered

    if (device.type != "cpu" or not engine_choice(dtype)
            or not (block_products.available() or int4_offered())):
        return None
    from engine.loading.gguf_base import read_blocks

    return read_blocks(base, block_products.SUPPORTED)


def fit(model: Transformer, dtype: str | None, device: torch.device, blocks: dict[str, Blocks] | None = None,
        then: Callable[[Calibration], object] | None = None) -> tuple[Calibration, PendingCalibration | None]:
    """Fuse for inference and pick the kernels: reduced-precision copies, and the checkpoint's own `blocks`
    when it has them, only when no dtype was asked for (they do not keep float32 results). Returns the
    calibration applied and, when that is a default until this machine is measured, the measurement to run
    between requests (`engine.loading.tuning`); `then` gets the calibration once it is final (now, or when
    the measurement ends)."""
    from engine.kernels import block_products
    from engine.loading import quantize, tuning
    from engine.loading.native_build import int4_offered

    model.eval()
    model.fuse_for_inference()
    if dtype == INT8:
        quantize.quantize_int8(model)
        return UNMEASURED, None
    if blocks and device.type == "cpu" and engine_choice(dtype):
        if block_products.available():
            quantize.attach_blocks(model, blocks)
        if int4_offered():
            quantize.attach_int4(model, blocks)
    calibration, default = tuning.calibration_for(model, device)
    calibration.apply(model.products(), half=engine_choice(dtype))
    if default:  # the measurement races the blocks too: they stay until it is done
        return calibration, tuning.BackgroundCalibration(model, engine_choice(dtype), then)
    tuning.drop_unused_blocks(model.products())
    if then is not None:
        then(calibration)
    return calibration, None
