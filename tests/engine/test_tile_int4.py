"""The int4 kernels on AMX tiles and on AVX2 (engine.kernels.tile_int4) and their builds
(engine.loading.native_build): the packed layout, products against float64 with a row's bits independent of
the rows beside it, and a build that is made once per machine, kept, and falls back to the next kernel when
it fails. The product tests need a CPU with AMX bfloat16 tiles or AVX2; the layout test runs everywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from engine.kernels.tile_int4 import (
    AVX2_BACKEND,
    AVX2_CPU_FLAGS,
    CPU_FLAGS,
    VNNI_BACKEND,
    VNNI_CPU_FLAGS,
    TileInt4Product,
    expected,
    pack,
)
from engine.loading.native_build import INT4_AVX2, INT4_VNNI, TILE_INT4, int4_forms
from engine.loading.tuning import all_cpu_flags

ROOT = Path(__file__).resolve().parents[2]
has_tiles = set(CPU_FLAGS) <= all_cpu_flags()
needs_tiles = pytest.mark.skipif(not has_tiles, reason="this CPU has no AMX bfloat16 tiles")
needs_avx2 = pytest.mark.skipif(not set(AVX2_CPU_FLAGS) <= all_cpu_flags(), reason="this CPU has no AVX2")
needs_vnni = pytest.mark.skipif(not set(VNNI_CPU_FLAGS) <= all_cpu_flags(), reason="this CPU has no AVX-512 VNNI")


def _weight(n: int, k: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 16, (n, k), generator=generator, dtype=torch.int32)
    scale = (torch.rand(n, k // 32, generator=generator) / 16).to(torch.bfloat16).float()
    offset = (torch.randn(n, k // 32, generator=generator) / 16).to(torch.bfloat16).float()
    return codes, scale, offset


def test_the_layout_holds_each_code_once_where_the_c_source_reads_it():
    """Block b, group g: chunk c's byte 2j + e holds code (16b + j, 32g + 4c + e) in its low nibble and
    (16b + j, 32g + 4c + 2 + e) in its high one; then the 16 scales and 16 offsets as bfloat16."""
    codes, scale, offset = _weight(48, 96, seed=0)
    packed = pack(codes, scale, offset)
    assert packed.shape == (3, 3, 320) and packed.dtype == torch.uint8
    for b, g, c, j, e in [(0, 0, 0, 0, 0), (2, 1, 7, 15, 1), (1, 2, 3, 9, 0), (2, 2, 5, 4, 1)]:
        byte = int(packed[b, g, 32 * c + 2 * j + e])
        assert byte & 15 == codes[16 * b + j, 32 * g + 4 * c + e]
        assert byte >> 4 == codes[16 * b + j, 32 * g + 4 * c + 2 + e]
    tail = packed[:, :, 256:].contiguous().view(torch.bfloat16).float()  # (blocks, groups, 32)
    assert torch.equal(tail[1, 2, :16], scale[16:32, 2]) and torch.equal(tail[1, 2, 16:], offset[16:32, 2])


@pytest.mark.parametrize("kernel", [pytest.param(TILE_INT4, id="tiles", marks=needs_tiles),
                                    pytest.param(INT4_AVX2, id="avx2", marks=needs_avx2),
                                    pytest.param(INT4_VNNI, id="vnni", marks=needs_vnni)])
@pytest.mark.parametrize(("n", "k", "width", "rank"), [(3104, 576, 576, 0), (576, 1568, 1536, 24), (48, 64, 40, 12)])
def test_products_match_float64_and_a_row_keeps_its_bits_beside_any_rows(kernel, n, k, width, rank):
    """The LoRA's input columns (`rank` products by a down-projection) come after the row's own `width`
    columns, zeros up to k; the sums are float32 over the rows as the kernel rounds them (bfloat16 on the
    tiles; int8 per group of 32 on AVX2 and VNNI, the offsets' terms on float32 sums), so the error is float32's
    beyond that rounding (torch's int4 kernel rounds its output to bfloat16)."""
    lib = kernel.library()
    assert lib is not None
    codes, scale, offset = _weight(n, k, seed=1)
    product = TileInt4Product(pack(codes, scale, offset), lib)
    generator = torch.Generator().manual_seed(2)
    down = torch.randn(rank, width, generator=generator) / 8 if rank else None
    x = torch.randn(40, width, generator=generator)
    got = product(x, down)
    wide = x if down is None else torch.cat([x, x @ down.T], 1)
    tiles = kernel is TILE_INT4
    should = expected(F.pad(wide, (0, k - wide.shape[1])), codes, scale, offset, avx2=not tiles)
    error = (got.double() - should).abs().max() / should.abs().max()
    # the LoRA's columns, which the kernel computes itself, round to other bfloat16s or int8 steps here
    assert error < (1e-2 if rank else 1e-5), error
    for rows in (1, 3, 16, 17):
        for start in (0, 5):
            assert torch.equal(product(x[start : start + rows], down), got[start : start + rows]), (rows, start)
    if down is not None:  # a float16 down-projection reads as its float32 values do (an adapter saved in float16)
        half = down.half()
        for rows in (1, 3, 40):
            assert torch.equal(product(x[:rows], half), product(x[:rows], half.float())), rows


@needs_vnni
def test_the_vnni_build_gives_the_avx2_build_s_bits_at_every_row_count():
    """The two builds sum the same integers and then run the same float32 sequence: a machine's calibration and
    drafting see one set of bits whichever of them it runs."""
    avx2, vnni = INT4_AVX2.library(), INT4_VNNI.library()
    assert avx2 is not None and vnni is not None
    codes, scale, offset = _weight(576, 608, seed=4)
    packed = pack(codes, scale, offset)
    generator = torch.Generator().manual_seed(5)
    down = torch.randn(16, 576, generator=generator) / 8
    x = torch.randn(19, 576, generator=generator)
    for rows in (1, 2, 3, 4, 7, 8, 9, 16, 19):
        assert torch.equal(TileInt4Product(packed, vnni)(x[:rows], down), TileInt4Product(packed, avx2)(x[:rows], down)), rows


def _in_fresh_process(cache: Path, code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "DCOMPLETE_CACHE": str(cache), **env}, check=False)


LOAD = "from engine.loading.native_build import TILE_INT4; print(TILE_INT4.library() is not None, TILE_INT4.library_path())"


@needs_tiles
def test_the_library_is_built_once_and_later_processes_map_it(tmp_path):
    first = _in_fresh_process(tmp_path, LOAD)
    assert first.returncode == 0, first.stderr
    ready, path = first.stdout.split()
    assert ready == "True" and Path(path).is_file()
    built = Path(path).stat().st_mtime_ns
    second = _in_fresh_process(tmp_path, LOAD)
    assert second.stdout.split() == ["True", path] and Path(path).stat().st_mtime_ns == built
    assert not list(Path(path).parent.glob("*.tmp"))


@needs_tiles
def test_a_failed_build_leaves_a_note_and_torch_s_kernel_serves(tmp_path):
    """A compiler that fails: the load goes on without the tiles and says why once; the next process does
    not try again (the prepared weights and calibration it keeps are named for torch's kernel)."""
    failing = _in_fresh_process(tmp_path, LOAD + "; print(TILE_INT4.wanted())", CC="/bin/false")
    assert failing.returncode == 0, failing.stderr
    assert failing.stdout.split()[0] == "False" and failing.stdout.split()[2] == "False"
    assert "the AMX int4 kernel is not used (/bin/false exited 1" in failing.stderr
    notes = list((tmp_path / "kernels").glob("*.failed"))
    assert len(notes) == 1
    again = _in_fresh_process(tmp_path, LOAD, CC="/bin/false")
    assert again.stdout.split()[0] == "False" and "is not used" not in again.stderr


@needs_avx2
@pytest.mark.parametrize("vnni", [pytest.param("on", marks=needs_vnni), "off"])
def test_a_cpu_without_tiles_runs_the_vnni_or_avx2_kernel_in_its_products(tmp_path, vnni):
    """With the tiles off (as on a CPU without them, the Zen 4 EPYC) the load's 4-bit products run on the
    AVX-512 VNNI build, and with that off too (an AVX2-only CPU) on the AVX2 build; its 8-bit head runs on the
    same build's 8-bit product (`engine.kernels.int8_blocks`)."""
    code = ("from engine import Engine; e = Engine.load('default', device='cpu'); m = e.loaded.model; "
            "print(sorted({p.int4.backend for p in m.products() if p.int4}), m.head.int4.backend, "
            "type(m.head.int4).__name__)")
    loaded = _in_fresh_process(tmp_path, code, DCOMPLETE_INT4_TILES="off", DCOMPLETE_INT4_VNNI=vnni)
    assert loaded.returncode == 0, loaded.stderr
    backend = VNNI_BACKEND if vnni == "on" else AVX2_BACKEND
    assert loaded.stdout.split() == [f"['{backend}']", backend, "Int8BlockProduct"]
    assert [k.name for k in int4_forms()] == [k.name for k in (TILE_INT4, INT4_VNNI, INT4_AVX2) if k.wanted()]


def test_off_keeps_torch_s_kernel(tmp_path):
    off = _in_fresh_process(tmp_path, LOAD, DCOMPLETE_INT4_TILES="off", DCOMPLETE_INT4_VNNI="off",
                            DCOMPLETE_INT4_AVX2="off")
    assert off.returncode == 0, off.stderr
    assert off.stdout.split()[0] == "False" and not (tmp_path / "kernels").exists()


@needs_tiles
def test_a_failed_build_in_one_cache_folder_leaves_other_folders_their_library(tmp_path, monkeypatch):
    """A process's libraries are kept per path: a test (or a user's script) that loads once with a failing
    compiler or another cache folder does not leave torch's kernel to every later load."""
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path / "first"))
    monkeypatch.setenv("CC", "/bin/false")
    assert TILE_INT4.library() is None and TILE_INT4.failed_note().exists()
    monkeypatch.delenv("CC")
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path / "second"))
    assert TILE_INT4.library() is not None


@needs_tiles
def test_a_cache_folder_that_cannot_be_written_gets_a_process_of_its_own_copy(tmp_path, monkeypatch):
    """The cache root is a file here (tests run as root, which writes through read-only modes): the build
    goes to a temp folder of this process, and the tiles still serve."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("DCOMPLETE_CACHE", str(blocked))
    lib = TILE_INT4.library()
    assert lib is not None and not Path(lib._name).is_relative_to(blocked)


@needs_avx2
def test_a_product_refuses_inputs_of_the_wrong_shape_or_type():
    """A call the kernel would read out of bounds is a one-line error naming what was wrong, before C runs."""
    lib = INT4_AVX2.library()
    assert lib is not None
    product = TileInt4Product(pack(*_weight(16, 64, seed=3)), lib)
    x = torch.randn(2, 40)
    with pytest.raises(ValueError, match="40 \\+ 32 input columns for a product of 64"):
        product(x, torch.randn(32, 40))
    with pytest.raises(ValueError, match="a down-projection of 39 columns for 40 input columns"):
        product(x, torch.randn(8, 39))
    with pytest.raises(ValueError, match="torch.bfloat16"):
        product(x, torch.randn(8, 40).to(torch.bfloat16))
    assert product(x, torch.randn(8, 40)).shape == (2, 16)
