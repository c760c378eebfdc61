"""Swapping kernels into a built, fused model: the load's last step before calibration.

The kernel files (`engine.kernels`) know how one product runs and nothing of models; this module walks a
model's fused products and gives each the kernel it can take: int8 weights for `dtype="int8"`
(`engine.kernels.int8`), and the checkpoint's own GGUF blocks for ONNX Runtime (`engine.kernels.block_products`)
and torch's int4 kernel (`engine.kernels.int4_product`). Which of them a call runs is the calibration's
choice (`engine.loading.calibrate`).
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from engine.kernels import int8_blocks
from engine.kernels.block_products import BLOCK, SUPPORTED, BlockProduct, Blocks
from engine.kernels.int4_product import fits, from_blocks
from engine.kernels.int8 import Int8Projections
from engine.kernels.projections import FusedProjections
from engine.loading.native_build import int4_library
from engine.models.layers import fused_groups
from engine.models.transformer import Transformer


def quantize_int8(model: Transformer) -> None:
    """Swap gate/up and o_proj of every block for int8 versions (in place, after `fuse_for_inference`);
    the experts of a mixture (`engine.models.moe`, no fused gate/up) stay as they are."""
    for block in model.model.blocks():
        gate_up = getattr(block.mlp, "gate_up", None)
        if isinstance(gate_up, FusedProjections):
            setattr(block.mlp, "gate_up", Int8Projections(gate_up))  # noqa: B010 (mlp is an nn.Module)
        out = block.self_attn.out
        assert isinstance(out, FusedProjections), "quantize_int8 runs after fuse_for_inference"
        block.self_attn.out = Int8Projections(out)


def attach_blocks(model: Transformer, blocks: dict[str, Blocks]) -> None:
    """Give each fused product of `model` whose weights all came in supported blocks a `BlockProduct`."""
    threads = torch.get_num_threads()
    for group, parts in products_with_blocks(model, blocks):
        if len({p.kind for p in parts}) == 1 and parts[0].kind in SUPPORTED:
            group.blocks = BlockProduct(parts, threads)


def products_with_blocks(model: Transformer, blocks: dict[str, Blocks]) -> Iterator[tuple[FusedProjections, list[Blocks]]]:
    """Each fused product of `model` (fused) whose weights all came in `blocks`, with those blocks in the
    product's row order."""
    names = {"q_proj": "self_attn", "k_proj": "self_attn", "v_proj": "self_attn", "o_proj": "self_attn",
             "gate_proj": "mlp", "up_proj": "mlp", "down_proj": "mlp"}
    for i, block in enumerate(model.model.blocks()):
        for group in fused_groups(block):
            parts = [blocks.get(f"model.layers.{i}.{names[n]}.{n}.weight") for n in group.names]
            if all(p is not None for p in parts):
                yield group, [p for p in parts if p is not None]
    head = blocks.get("lm_head.weight") or (blocks.get("model.embed_tokens.weight")
                                            if model.shape.tie_word_embeddings else None)
    if head is not None and model.head is not None:
        yield model.head, [head]


def attach_int4(model: Transformer, blocks: dict[str, Blocks]) -> None:
    """Give each fused product of `model` (fused, its adapter's LoRA attached) whose weights all came in
    4-bit blocks the kernel can take an `Int4Product` (the `int4` kernel of `projections.FusedProjections`):
    with a LoRA, its up-projection (times its scale) as extra input columns, which a decoding step fills
    with the LoRA's down-projection of the row, so that one product adds the update. A product in 8-bit
    blocks without a LoRA (SmolLM2's head) gets an `int8_blocks` product where the built kernel has one."""
    tiles = int4_library()
    for group, parts in products_with_blocks(model, blocks):
        if group.weight.shape[1] % BLOCK:
            continue
        if fits(parts):
            group.int4 = from_blocks(parts, None if group.up is None else group.up * group.scale, tiles)
        elif (group.up is None and int8_blocks.fits(parts) and tiles is not None
              and int8_blocks.offered(tiles)):  # its check runs once, and only for a model with such blocks
            group.int4 = int8_blocks.from_blocks(parts, tiles)
