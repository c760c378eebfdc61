"""The 8-bit product on the AVX2 build (engine.kernels.int8_blocks): its layout, products by a GGUF file's own
Q8_0 blocks against the gguf package's values in float64 (rows rounded to int8 as the kernel rounds them), a row's bits beside any rows, what it refuses, the
prepared file's copy, and the load that gives it to SmolLM2's head. The product tests need a CPU with AVX2;
the layout test runs everywhere."""

from __future__ import annotations

import gguf
import numpy as np
import pytest
import torch
from gguf.quants import dequantize, quantize
from torch import nn

from engine.kernels import int8_blocks
from engine.kernels.block_products import Blocks
from engine.kernels.int4_product import restored
from engine.kernels.int8_blocks import Int8BlockProduct, fits, from_blocks, offered, pack
from engine.kernels.projections import INT4, MAX_TABLE_ROWS, FusedProjections
from engine.kernels.tile_int4 import AVX2_CPU_FLAGS, CPU_FLAGS, VNNI_CPU_FLAGS, int8_rows
from engine.loading.calibrate import row_invariant
from engine.loading.native_build import INT4_AVX2, INT4_VNNI, TILE_INT4
from engine.loading.tuning import all_cpu_flags

needs_avx2 = pytest.mark.skipif(not set(AVX2_CPU_FLAGS) <= all_cpu_flags(), reason="this CPU has no AVX2")


@pytest.fixture(params=["avx2", "vnni"])
def build(request):
    """The AVX2 build, and the AVX-512 VNNI build of the same source where the CPU has it."""
    kernel, flags = (INT4_AVX2, AVX2_CPU_FLAGS) if request.param == "avx2" else (INT4_VNNI, VNNI_CPU_FLAGS)
    if not set(flags) <= all_cpu_flags():
        pytest.skip(f"this CPU has no {request.param}")
    lib = kernel.library()
    assert lib is not None, f"a CPU with {request.param} and a compiler must build the kernel"
    return lib


def _q8(rows: int, width: int, seed: int) -> tuple[Blocks, torch.Tensor]:
    """(Q8_0 blocks of a random weight, the weight the gguf package dequantizes from them)."""
    weights = np.random.default_rng(seed).normal(size=(rows, width)).astype(np.float32)
    quantized = quantize(weights, gguf.GGMLQuantizationType.Q8_0)
    exact = torch.from_numpy(dequantize(quantized, gguf.GGMLQuantizationType.Q8_0).astype(np.float32))
    data = torch.from_numpy(np.ascontiguousarray(quantized).view(np.uint8).reshape(rows, -1).copy())
    return Blocks("Q8_0", data), exact


def test_the_layout_holds_each_code_once_where_the_c_source_reads_it():
    """Block b, group g: byte 64 c + 4 j + e is code (16 b + j, 32 g + 4 c + e); then the 16 outputs' float32
    scales."""
    generator = torch.Generator().manual_seed(0)
    codes = torch.randint(-127, 128, (48, 96), generator=generator).to(torch.int8)
    scale = torch.rand(48, 3, generator=generator)
    packed = pack(codes, scale)
    assert packed.shape == (3, 3, int8_blocks.GROUP_BYTES) and packed.dtype == torch.uint8
    for b, g, c, j, e in [(0, 0, 0, 0, 0), (2, 1, 7, 15, 3), (1, 2, 1, 9, 2), (2, 2, 4, 4, 1)]:
        assert int(packed[b, g, 64 * c + 4 * j + e].view(torch.int8)) == codes[16 * b + j, 32 * g + 4 * c + e]
    tail = packed[:, :, 512:].contiguous().view(torch.float32)  # (blocks, groups, 16)
    assert torch.equal(tail[1, 2], scale[16:32, 2])


@needs_avx2
@pytest.mark.parametrize(("sizes", "width"), [((48,), 64), ((32, 64, 16), 576), ((4096,), 576)])
def test_products_are_the_file_s_own_weights_and_a_row_keeps_its_bits_beside_any_rows(build, sizes, width):
    parts, exact = zip(*(_q8(n, width, seed=i) for i, n in enumerate(sizes)))
    assert fits(parts) and offered(build)
    product = from_blocks(parts, build)
    weight = torch.cat(exact).double()
    generator = torch.Generator().manual_seed(3)
    for rows in (1, 2, 5, 16, 33):
        x = torch.randn(rows, width + 8, generator=generator)[:, :width]  # rows at a stride
        y = product(x)
        assert y.shape == (rows, weight.shape[0]) and y.dtype == torch.float32
        torch.testing.assert_close(y.double(), int8_rows(x) @ weight.T, rtol=1e-5, atol=1e-4)  # rows as rounded
        assert torch.equal(torch.cat([product(x[i : i + 1]) for i in range(rows)]), y)


@needs_avx2
def test_a_product_refuses_what_it_cannot_run(build):
    """A call the kernel would read out of bounds, or one asking for a LoRA's columns, is a one-line error."""
    product = from_blocks([_q8(16, 64, seed=0)[0]], build)
    with pytest.raises(ValueError, match="40 input columns for a product of 64"):
        product(torch.randn(2, 40))
    with pytest.raises(ValueError, match="takes no down-projection"):
        product(torch.randn(2, 64), torch.randn(4, 64))
    assert not fits([_q8(16, 64, seed=0)[0], Blocks("Q4_0", torch.zeros(16, 36, dtype=torch.uint8))])
    assert not fits([_q8(24, 64, seed=0)[0]])  # not whole blocks of 16 outputs


@needs_avx2
def test_a_head_on_the_8_bit_product_is_a_row_invariant_decoding_kernel_and_kept_by_a_prepared_file(build):
    """As `engine.loading.quantize.attach_int4` gives it to a head: the calibration's row check passes, the
    decoding table runs it, and `tensors()` restores to the same product (none where no kernel can run it)."""
    blocks, exact = _q8(64, 96, seed=5)
    linear = nn.Linear(96, 64, bias=False)
    linear.weight = nn.Parameter(exact, requires_grad=False)
    head = FusedProjections(("lm_head",), (linear,))
    head.int4 = from_blocks([blocks], build)
    head.set_kernels((INT4,) * MAX_TABLE_ROWS)
    assert row_invariant([head], INT4)
    x = torch.randn(1, 6, 96)
    y = head.product(x, head.width)
    torch.testing.assert_close(y, (int8_rows(x.view(6, 96)) @ exact.double().T).float().view(1, 6, 64), rtol=1e-5, atol=1e-4)
    again = restored({k: v.clone() for k, v in head.int4.tensors().items()}, build)
    assert isinstance(again, Int8BlockProduct) and torch.equal(again(x), y)
    assert restored(head.int4.tensors(), None) is None


@pytest.mark.skipif(not set(CPU_FLAGS) <= all_cpu_flags(), reason="this CPU has no AMX bfloat16 tiles")
def test_the_amx_build_offers_no_8_bit_product():
    """Its bfloat16 head costs about the same from 1 to 16 rows: the head keeps it."""
    lib = TILE_INT4.library()
    assert lib is not None and not offered(lib)


@pytest.mark.skipif(not set(VNNI_CPU_FLAGS) <= all_cpu_flags(), reason="this CPU has no AVX-512 VNNI")
def test_the_vnni_build_s_8_bit_product_gives_the_avx2_build_s_bits():
    """Codes made unsigned (+128) and the rows' sums taken off again: the same integers, the same float32 steps."""
    avx2, vnni = INT4_AVX2.library(), INT4_VNNI.library()
    assert avx2 is not None and vnni is not None
    blocks = [_q8(64, 576, seed=7)[0]]
    x = torch.randn(17, 576, generator=torch.Generator().manual_seed(8))
    for rows in (1, 3, 8, 9, 17):
        assert torch.equal(from_blocks(blocks, vnni)(x[:rows]), from_blocks(blocks, avx2)(x[:rows])), rows
