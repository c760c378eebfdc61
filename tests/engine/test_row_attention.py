"""The decoding attention kernel (engine.kernels.row_attention) and how a load puts it to work: attention
against float64, a row's bits the same beside any rows and at any thread count, the inputs it leaves to
torch, and a load that installs it (or, when its build fails, goes on with torch's products). The three
forms pass the same tests, each on a CPU that has what it needs: AVX-512 BF16 vectors (the AMX Xeon, the
Zen 4 EPYC), AMX tiles (the Xeon), AVX2 (any of them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from engine.kernels import row_attention
from engine.loading.native_build import (
    ROW_ATTENTION,
    ROW_ATTENTION_AVX2,
    ROW_ATTENTION_TILES,
    attention_forms,
)
from engine.loading.tuning import all_cpu_flags
from engine.models.layers import attention_by_products, decoding_attention

ROOT = Path(__file__).resolve().parents[2]
needs_kernel = pytest.mark.skipif(not set(row_attention.AVX2_CPU_FLAGS) <= all_cpu_flags(),
                                  reason="this CPU has no AVX2")
needs_vectors = pytest.mark.skipif(not set(row_attention.CPU_FLAGS) <= all_cpu_flags(),
                                   reason="this CPU has no AVX-512 BF16")


needs_tiles = pytest.mark.skipif(not set(row_attention.TILE_CPU_FLAGS) <= all_cpu_flags(),
                                 reason="this CPU has no AMX tiles")


@pytest.fixture(scope="module", params=[pytest.param(ROW_ATTENTION, id="vectors", marks=needs_vectors),
                                        pytest.param(ROW_ATTENTION_TILES, id="tiles", marks=needs_tiles),
                                        pytest.param(ROW_ATTENTION_AVX2, id="avx2", marks=needs_kernel)])
def lib(request):
    built = request.param.library()
    assert built is not None, "the kernel was not built on a CPU that has what it needs"
    return built


@needs_tiles
def test_the_forms_agree_and_an_amx_machine_runs_the_tiles():
    """The forms sum in other orders (bits apart, values within bfloat16's rounding of the weights; the AVX2
    form keeps float32 weights, within 1e-6 of float64); a machine with tiles runs them at every row count,
    each form named by its backend."""
    q, k, v, mask = _inputs(1, 9, 3, 16, 1100, 64, seed=7)
    forms = (ROW_ATTENTION, ROW_ATTENTION_TILES, ROW_ATTENTION_AVX2)
    vectors, tiles, avx2 = (row_attention.attend(q, k, v, mask, kernel.library()) for kernel in forms)
    assert torch.allclose(vectors, tiles, rtol=1e-2, atol=1e-2)
    assert torch.allclose(avx2.double(), row_attention.reference(q, k, v, mask), rtol=1e-5, atol=1e-6)
    assert [form.name for form in attention_forms()] == [form.name for form in (forms[1], forms[0], forms[2])]
    assert [row_attention.backend(form.library()) for form in forms] == [
        row_attention.BACKEND, row_attention.TILE_BACKEND, row_attention.AVX2_BACKEND]


def _inputs(batch: int, heads: int, kv_heads: int, rows: int, keys: int, dim: int, seed: int,
            hidden: float = 0.2) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, rows, dim, generator=generator).to(torch.bfloat16)
    k, v = torch.randn(2, batch, kv_heads, keys, dim, generator=generator).to(torch.bfloat16)
    mask = torch.zeros(batch, heads, rows, keys).masked_fill(
        torch.rand(batch, heads, rows, keys, generator=generator) < hidden, float("-inf"))
    mask[..., -1] = 0.0  # every row sees a key
    return q, k, v, mask


@needs_kernel
@pytest.mark.parametrize(("heads", "kv_heads", "keys", "dim"),
                         [(9, 3, 1100, 64), (4, 4, 15, 32), (8, 2, 257, 128), (2, 1, 1, 64)])
def test_attention_matches_float64_and_a_row_keeps_its_bits_beside_any_rows(lib, heads, kv_heads, keys, dim):
    """Grouped-query heads, blocks of 16 keys with a part, chunks of 256 keys with a part, one key; scores are
    float32 over the bfloat16 inputs and the weights meet the values in bfloat16, so the error is bfloat16's
    rounding of the weights (below 2e-3 here), not a wrong sum's."""
    q, k, v, mask = _inputs(2, heads, kv_heads, 17, keys, dim, seed=keys)
    got = row_attention.attend(q, k, v, mask, lib)
    assert got is not None and got.dtype == torch.float32 and got.shape == (2, heads, 17, dim)
    assert torch.allclose(got.double(), row_attention.reference(q, k, v, mask), rtol=1e-2, atol=1e-2)
    for rows in (1, 2, 5, 16):
        for start in (0, 1):
            part = row_attention.attend(q[:, :, start : start + rows], k, v, mask[:, :, start : start + rows], lib)
            assert torch.equal(part, got[:, :, start : start + rows]), (rows, start)


@needs_kernel
def test_a_row_s_bits_do_not_depend_on_the_thread_count(lib):
    q, k, v, mask = _inputs(1, 9, 3, 4, 1100, 64, seed=3)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = row_attention.attend(q, k, v, mask, lib)
        torch.set_num_threads(2)
        two = row_attention.attend(q, k, v, mask, lib)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one, two)


@needs_kernel
def test_masks_of_one_head_for_all_no_mask_and_keys_hidden_by_whole_chunks(lib):
    """A (B, 1, R, S) mask reaches every head; no mask attends everywhere; a row whose first 600 keys are
    hidden (chunks that weigh nothing) gets the attention over the rest."""
    q, k, v, mask = _inputs(2, 6, 2, 3, 700, 64, seed=4)
    shared = mask[:, :1].clone()
    shared[:, :, 1, :600] = float("-inf")
    for m in (shared, None):
        got = row_attention.attend(q, k, v, m, lib)
        want = row_attention.reference(q, k, v, None if m is None else m.expand(-1, 6, -1, -1))
        assert torch.allclose(got.double(), want, rtol=1e-2, atol=1e-2)


@needs_kernel
def test_the_decoding_attention_runs_the_kernel_once_installed_and_torch_where_it_cannot(lib):
    """Installed, `decoding_attention` answers from the kernel for bfloat16 keys (queries given as the
    attention module makes them: a transposed view); float32 keys and a bool mask go to torch's products."""
    q, k, v, mask = _inputs(1, 9, 3, 3, 300, 64, seed=5)
    view = q.transpose(1, 2).contiguous().transpose(1, 2)
    before = row_attention.installed()
    try:
        row_attention.install(lib)
        assert row_attention.backend() == row_attention.backend(lib) != "torch"
        assert torch.equal(decoding_attention(view, k, v, mask), row_attention.attend(q, k, v, mask, lib))
        wide = decoding_attention(q.float(), k.float(), v.float(), mask)
        assert torch.equal(wide, attention_by_products(q.float(), k.float(), v.float(), mask))
        assert row_attention.attend(q, k, v, mask != float("-inf"), lib) is None
        row_attention.install(None)
        assert row_attention.backend() == "torch" and row_attention.attend(q, k, v, mask) is None
    finally:
        row_attention.install(before)


LOAD = """
from engine import DenoiseParams, Engine, InfillRequest
from engine.kernels import row_attention
engine = Engine.load("default")
sp, tok = engine.special, engine.tokenizer
canvas = [sp.bos_id, *tok.encode("def area(w, h):\\n    return"), *[sp.mask_id] * 6, *tok.encode("\\n"), sp.eos_id]
written = engine.infill([InfillRequest(canvas)], DenoiseParams())[0].spans[0].token_ids
print(row_attention.backend(), len(written) > 0)
"""


def _load_in_fresh_process(cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LOAD], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "DCOMPLETE_CACHE": str(cache), **env}, check=False)


@needs_kernel
def test_a_load_installs_the_kernel_and_one_whose_build_fails_goes_on_with_torch_s_products(tmp_path):
    built = _load_in_fresh_process(tmp_path / "built")
    assert built.returncode == 0, built.stderr
    assert built.stdout.split() == [row_attention.backend(attention_forms()[0].library()), "True"]
    failing = _load_in_fresh_process(tmp_path / "failing", CC="/bin/false")
    assert failing.returncode == 0, failing.stderr
    assert failing.stdout.split() == ["torch", "True"]
    assert "is not used (/bin/false exited 1" in failing.stderr
    forms = attention_forms()  # each form's switch hands the load to the next form the CPU has
    for turned_off in range(1, len(forms)):
        next_form = _load_in_fresh_process(tmp_path / f"next{turned_off}", **{f.env: "off" for f in forms[:turned_off]})
        assert next_form.returncode == 0, next_form.stderr
        assert next_form.stdout.split() == [row_attention.backend(forms[turned_off].library()), "True"]
