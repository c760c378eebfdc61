"""The norm kernel (engine.kernels.row_norm): float64's norms, a row's bits its own, the calls it leaves to
torch, and a load that gives it to its model's norms."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

from engine.kernels import row_norm
from engine.loading.native_build import ROW_NORM
from engine.models.layers import RMSNorm


@pytest.fixture(scope="module")
def lib():
    built = ROW_NORM.library()
    if built is None:
        pytest.skip("no C compiler here: torch's fused norm serves")  # the build tests cover a failing one
    return built


@pytest.mark.parametrize("dim", [576, 64, 7])
def test_norms_match_float64_and_a_row_keeps_its_bits_beside_any_rows(lib, dim):
    generator = torch.Generator().manual_seed(dim)
    x = torch.randn(3, 9, dim, generator=generator) * 4
    weight = torch.randn(dim, generator=generator)
    got = row_norm.run(lib, x, weight, 1e-5)
    want = x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-5) * weight.double()
    assert got.shape == x.shape and torch.allclose(got.double(), want, rtol=1e-5, atol=1e-6)
    assert torch.allclose(got, F.rms_norm(x, (dim,), weight, 1e-5), rtol=1e-6, atol=1e-6)
    rows = x.reshape(-1, dim)
    for start, count in [(0, 1), (4, 3), (10, 17)]:
        assert torch.equal(row_norm.run(lib, rows[start : start + count], weight, 1e-5),
                           got.reshape(-1, dim)[start : start + count])
    strided = torch.randn(5, 2 * dim, generator=generator)[:, ::2]
    assert torch.equal(row_norm.run(lib, strided, weight, 1e-5), row_norm.run(lib, strided.contiguous(), weight, 1e-5))


def test_a_norm_with_the_kernel_leaves_gradients_and_other_dtypes_to_torch(lib):
    norm = RMSNorm(64, 1e-5)
    with torch.no_grad():
        norm.weight.normal_()
    norm.native = row_norm.RowNorm(lib)
    x = torch.randn(2, 64)
    with torch.no_grad():
        assert torch.equal(norm(x), row_norm.run(lib, x, norm.weight, 1e-5))
    assert copy.deepcopy(norm).native is norm.native  # copies of a model share the library
    trained = norm(x.requires_grad_())
    trained.sum().backward()
    assert x.grad is not None and norm.weight.grad is not None
    assert norm(x.detach().double()).dtype == torch.float64


def test_a_cpu_load_gives_the_kernel_to_every_norm_of_its_model(lib):
    from engine import Engine

    engine = Engine.load("default", device="cpu")
    norms = [m for m in engine.loaded.model.modules() if isinstance(m, RMSNorm)]
    assert len(norms) == 2 * engine.loaded.model.shape.num_hidden_layers + 1
    assert all(m.native is not None and m.native.lib is lib for m in norms)
