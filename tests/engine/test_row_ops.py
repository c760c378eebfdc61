"""The row operations kernel (engine.kernels.row_ops): float64's norms, a row's bits its own, torch's
rotations bit for bit, the calls it leaves to torch, and a load that gives it to its model's norms and
attention modules."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

from engine.kernels import row_ops
from engine.loading.native_build import ROW_OPS
from engine.models.layers import Attention, RMSNorm, apply_rotary, rotary_tables


@pytest.fixture(scope="module")
def lib():
    built = ROW_OPS.library()
    if built is None:
        pytest.skip("no C compiler here: torch's norms and rotations serve")  # the build tests cover a failing one
    return built


@pytest.mark.parametrize("dim", [576, 64, 7])
def test_norms_match_float64_and_a_row_keeps_its_bits_beside_any_rows(lib, dim):
    generator = torch.Generator().manual_seed(dim)
    x = torch.randn(3, 9, dim, generator=generator) * 4
    weight = torch.randn(dim, generator=generator)
    got = row_ops.norm(lib, x, weight, 1e-5)
    want = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-5) * weight.double()
    assert got.shape == x.shape and torch.allclose(got.double(), want, rtol=1e-5, atol=1e-6)
    assert torch.allclose(got, F.rms_norm(x, (dim,), weight, 1e-5), rtol=1e-6, atol=1e-6)
    rows = x.reshape(-1, dim)
    for start, count in [(0, 1), (4, 3), (10, 17)]:
        assert torch.equal(row_ops.norm(lib, rows[start : start + count], weight, 1e-5),
                           got.reshape(-1, dim)[start : start + count])
    strided = torch.randn(5, 2 * dim, generator=generator)[:, ::2]
    assert torch.equal(row_ops.norm(lib, strided, weight, 1e-5), row_ops.norm(lib, strided.contiguous(), weight, 1e-5))


def test_a_norm_with_the_kernel_leaves_gradients_and_other_dtypes_to_torch(lib):
    norm = RMSNorm(64, 1e-5)
    with torch.no_grad():
        norm.weight.normal_()
    norm.native = row_ops.RowOps(lib)
    x = torch.randn(2, 64)
    with torch.no_grad():
        assert torch.equal(norm(x), row_ops.norm(lib, x, norm.weight, 1e-5))
    assert copy.deepcopy(norm).native is norm.native  # copies of a model share the library
    trained = norm(x.requires_grad_())
    trained.sum().backward()
    assert x.grad is not None and norm.weight.grad is not None
    assert norm(x.detach().double()).dtype == torch.float64


@pytest.mark.parametrize(("batch", "tables"), [(1, 1), (3, 3), (3, 1)])
def test_rotations_have_torch_s_bits_for_the_attention_module_s_transposed_rows(lib, batch, tables):
    """Queries and keys as the attention module makes them (views of (B, T, H, D) rows), tables per batch row
    or one for all, at positions far enough for large angles: the same bits as `apply_rotary`."""
    generator = torch.Generator().manual_seed(batch + tables)
    for heads, rows, dim in [(9, 1, 64), (3, 16, 64), (2, 5, 128)]:
        x = torch.randn(batch, rows, heads, dim, generator=generator).transpose(1, 2)
        positions = torch.randint(0, 30_000, (tables, rows), generator=generator)
        cos, sin = rotary_tables(positions, dim, 100_000.0, torch.float32)
        assert row_ops.rotatable(x, cos, sin)
        assert torch.equal(row_ops.rotate(lib, x, cos, sin), apply_rotary(x, cos, sin))
    narrow = rotary_tables(positions, dim // 2, 100_000.0, torch.float32)  # partial rotary: torch's
    assert not row_ops.rotatable(x, *narrow) and not row_ops.rotatable(x.double(), cos.double(), sin.double())
    assert not row_ops.rotatable(x.clone().requires_grad_(), cos, sin)


def test_a_cpu_load_gives_the_kernel_to_every_norm_and_attention_of_its_model(lib):
    from engine import Engine

    engine = Engine.load("default", device="cpu")
    modules = [m for m in engine.loaded.model.modules() if isinstance(m, (RMSNorm, Attention))]
    assert len(modules) == 3 * engine.loaded.model.shape.num_hidden_layers + 1
    assert all(m.native is not None and m.native.lib is lib for m in modules)
