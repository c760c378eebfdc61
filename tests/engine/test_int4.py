"""The `int4` kernel (engine.kernels.int4_product): a GGUF file's own 4-bit blocks on torch's int4 CPU kernel or
on dcomplete's (`engine.kernels.tile_int4`: AMX tiles, AVX2; every test runs on each the CPU has), the adapter's LoRA added
row by row in decoding steps, text rows left to the other kernels, and prepared files that keep the codes."""

from __future__ import annotations

import gguf
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from gguf.quants import dequantize, quantize
from torch import nn

from engine.kernels.block_products import Blocks
from engine.kernels.int4_product import fits, from_blocks, quantize_columns, restored, supported
from engine.kernels.projections import INT4, LINEAR, MAX_TABLE_ROWS, FusedProjections
from engine.kernels.tile_int4 import AVX2_CPU_FLAGS, CPU_FLAGS, VNNI_CPU_FLAGS
from engine.loading.calibrate import DecodingRows, decoding_call, row_invariant
from engine.loading.native_build import INT4_AVX2, INT4_VNNI, TILE_INT4
from engine.loading.tuning import all_cpu_flags

pytestmark = pytest.mark.skipif(not supported(), reason="this torch has no CPU int4 kernel")  # torch 2.13 has it
SIZES = (64, 32, 32)  # q, k and v rows of a fused product, 64 wide


@pytest.fixture(params=["torch", "tiles", "vnni", "avx2"])
def tiles(request):
    """The built kernel (AMX tiles, AVX-512 VNNI, AVX2) for those runs, None for torch's kernel."""
    if request.param == "torch":
        return None
    kernel, flags = {"tiles": (TILE_INT4, CPU_FLAGS), "vnni": (INT4_VNNI, VNNI_CPU_FLAGS),
                     "avx2": (INT4_AVX2, AVX2_CPU_FLAGS)}[request.param]
    if not set(flags) <= all_cpu_flags():
        pytest.skip(f"this CPU has no {request.param}")
    lib = kernel.library()
    assert lib is not None, f"a CPU with {request.param} and a compiler must build the kernel"
    return lib


def _blocks(kind: str, rows: int, width: int, seed: int) -> tuple[Blocks, torch.Tensor]:
    """(blocks of a random weight, the weight the gguf package dequantizes from them)."""
    weights = np.random.default_rng(seed).normal(size=(rows, width)).astype(np.float32)
    quantized = quantize(weights, gguf.GGMLQuantizationType[kind])
    exact = torch.from_numpy(dequantize(quantized, gguf.GGMLQuantizationType[kind]).astype(np.float32))
    data = torch.from_numpy(np.ascontiguousarray(quantized).view(np.uint8).reshape(rows, -1).copy())
    return Blocks(kind, data), exact


def _product(kind: str, tiles, rank: int = 4) -> tuple[FusedProjections, list[torch.Tensor], list[torch.Tensor]]:
    """A fused q/k/v product over the dequantized weights of 4-bit blocks, with a LoRA folded in and the
    blocks attached for `int4`; with the LoRA's (down, up) per projection."""
    parts, linears = [], []
    for i, rows in enumerate(SIZES):
        blocks, exact = _blocks(kind, rows, 64, seed=i)
        linear = nn.Linear(64, rows, bias=False)
        linear.weight = nn.Parameter(exact, requires_grad=False)
        parts.append(blocks)
        linears.append(linear)
    product = FusedProjections(("q_proj", "k_proj", "v_proj"), linears)
    generator = torch.Generator().manual_seed(7)
    downs = [0.3 * torch.randn(rank, 64, generator=generator) for _ in SIZES]
    ups = [0.3 * torch.randn(rows, rank, generator=generator) for rows in SIZES]
    product.attach_low_rank(downs, ups, scale=2.0)
    assert fits(parts)
    assert product.up is not None
    product.int4 = from_blocks(parts, product.up * product.scale, tiles)  # as engine.loading.quantize.attach_int4
    product.mixed = (LINEAR,) * MAX_TABLE_ROWS
    product.set_kernels((INT4,) * MAX_TABLE_ROWS)
    return product, downs, ups


@pytest.mark.parametrize("kind", ["Q4_0", "Q4_1"])
def test_the_kernel_multiplies_by_the_file_s_own_weights(kind, tiles):
    """The codes are the file's own; only the per-block scales and offsets are rounded to bfloat16, and the
    rows run in bfloat16 (in int8 per group of 32 on AVX2)."""
    blocks, exact = _blocks(kind, 96, 128, seed=0)
    product = from_blocks([Blocks(kind, blocks.data[:32]), Blocks(kind, blocks.data[32:])], tiles=tiles)
    x = torch.randn(3, 128, generator=torch.Generator().manual_seed(0))
    expected = x @ exact.T
    got = product(x)
    assert got.shape == (3, 96) and got.dtype == torch.float32
    assert torch.allclose(got, expected, atol=0.02 * expected.abs().max())
    assert not fits([Blocks(kind, blocks.data[:40])])  # 40 output rows: the kernel takes multiples of 16
    assert not fits([_blocks("Q8_0", 32, 64, seed=1)[0]])


@pytest.mark.parametrize("kind", ["Q4_0", "Q4_1"])
def test_a_decoding_step_adds_the_lora_and_gives_a_row_the_same_bits_beside_others(kind, tiles):
    """The LoRA's up-projection rides in the 4-bit weight as extra input columns (quantized there), which
    the step fills with each row's down-projection."""
    product, downs, _ = _product(kind, tiles)
    assert product.up is not None
    up = _dequantized(product.up * product.scale)
    x = torch.randn(1, 5, 64, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        got = torch.cat(product(x, DecodingRows(5), 0), -1)  # type: ignore[arg-type]
        expected = F.linear(x, product.weight) + F.linear(F.linear(x, torch.cat(downs)), up)
        # rows rounded to bfloat16 (torch's kernel, the tiles) or to int8 per group of 32 (AVX2): within 2%
        # of the largest output, where the LoRA's share is about a tenth of it
        assert torch.allclose(got, expected, atol=0.02 * expected.abs().max()), kind
        for rows in (2, 3, 8, MAX_TABLE_ROWS, 40):  # 40: three passes of the tiles' 16 rows
            y = torch.randn(1, rows, 64)
            alone = torch.cat([decoding_call(product, y[:, i : i + 1]) for i in range(rows)], 1)
            assert torch.equal(decoding_call(product, y), alone), rows
    assert row_invariant([product], INT4)


def test_a_lora_saved_in_float16_is_read_in_float16_for_the_same_bits(tiles):
    """The down-projection a decoding step reads beside the 4-bit weight is float16 where that holds its
    values exactly (the shipped adapter is saved in float16) and the kernel reads float16 (not torch's):
    half the bytes, the same outputs."""
    product, _, _ = _product("Q4_1", tiles)
    assert product._int4_down().dtype == torch.float32  # random float32 values: kept as they are
    y = torch.randn(1, 4, 64, generator=torch.Generator().manual_seed(3))
    with torch.inference_mode():
        product._full[product.width :] = product._full[product.width :].half().float()
        product._down = None
        down = product._int4_down()
        assert down.dtype == (torch.float32 if tiles is None else torch.float16)
        assert torch.equal(down.float(), product._full[product.width :])
        as_read = decoding_call(product, y)
        product._down = (product._full, product.int4, down.float())  # the same values, read in float32
        assert torch.equal(decoding_call(product, y), as_read)


def _dequantized(weight: torch.Tensor) -> torch.Tensor:
    codes, scale, offset = quantize_columns(weight)
    values = (codes.float() - 8) * scale.repeat_interleave(32, 1) + offset.repeat_interleave(32, 1)
    return values[:, : weight.shape[1]]


def test_extra_columns_are_quantized_to_sixteen_levels_per_group_of_32():
    weight = torch.randn(48, 40, generator=torch.Generator().manual_seed(2))
    codes, scale, _ = quantize_columns(weight)
    assert codes.shape == (48, 64) and codes.min() >= 0 and codes.max() <= 15  # padded to whole groups
    step = scale.repeat_interleave(32, 1)[:, :40]
    assert ((_dequantized(weight) - weight).abs() <= step * 0.51 + 1e-6).all()


def test_text_rows_take_the_mixed_table_not_the_decoding_kernel(tiles):
    """A call that holds fixed-text rows (a prefill, text recomputed after an edit) runs the `mixed` kernel,
    so a text row gets the bits the prefill's kernel gives it."""
    product, _, _ = _product("Q4_1", tiles)
    x = torch.randn(1, 3, 64)

    class TextRows:
        rows, every_row = torch.zeros(0, dtype=torch.long), False

    with torch.inference_mode():
        got = torch.cat(product(x, TextRows(), 0), -1)  # type: ignore[arg-type]
    assert torch.equal(got, F.linear(x, product.weight))


def test_a_prepared_product_keeps_the_packed_codes(tiles):
    product, _, _ = _product("Q4_1", tiles)
    tensors = product.prepared()
    four_bit = {k.removeprefix("int4."): v.clone() for k, v in tensors.items() if k.startswith("int4.")}
    assert set(four_bit) == ({"codes", "scales"} if tiles is None else {"tiles"})
    fresh, _, _ = _product("Q4_1", tiles)
    fresh.int4 = restored(four_bit, tiles)
    fresh.restore({k: v.clone() for k, v in tensors.items()})
    x = torch.randn(1, 2, 64)
    with torch.inference_mode():
        assert torch.equal(decoding_call(fresh, x), decoding_call(product, x))
