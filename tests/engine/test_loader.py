"""Loader errors name the model spec and the reason; ids come from config and tokenizer."""

from __future__ import annotations

import json
import shutil

import pytest

from engine import Engine, ModelLoadError
from engine.families.registry import load


def copy(src, tmp_path):
    dst = tmp_path / "model"
    shutil.copytree(src, dst)
    return dst


def test_missing_config(tiny_dream, tmp_path):
    folder = copy(tiny_dream, tmp_path)
    (folder / "config.json").unlink()
    with pytest.raises(ModelLoadError, match="no config.json"):
        load(folder)


def test_unknown_architecture_lists_supported(tiny_dream, tmp_path):
    folder = copy(tiny_dream, tmp_path)
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(model_type="gpt2", architectures=["GPT2LMHeadModel"])
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelLoadError, match=r"unsupported model .*gpt2.*supported: anchored family.*Dream family"):
        load(folder)


def test_pickle_only_weights_are_refused(tiny_dream, tmp_path):
    folder = copy(tiny_dream, tmp_path)
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    with pytest.raises(ModelLoadError, match="only pickle weights .*pytorch_model.bin"):
        load(folder)


def test_missing_shard_is_named(tiny_dream, tmp_path):
    from safetensors.torch import load_file, save_file

    folder = copy(tiny_dream, tmp_path)
    state = load_file(folder / "model.safetensors")
    names = sorted(state)
    half = len(names) // 2
    save_file({k: state[k] for k in names[:half]}, str(folder / "model-00001-of-00002.safetensors"))
    save_file({k: state[k] for k in names[half:]}, str(folder / "model-00002-of-00002.safetensors"))
    (folder / "model.safetensors").unlink()
    weight_map = {k: "model-00001-of-00002.safetensors" for k in names[:half]}
    weight_map |= {k: "model-00002-of-00002.safetensors" for k in names[half:]}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    sharded = Engine.load(folder, device="cpu")  # the sharded checkpoint loads as a whole
    assert sharded.family == "dream"
    (folder / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(ModelLoadError, match="missing weight shard.*model-00002-of-00002"):
        load(folder)


def test_offline_repo_id_not_cached(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(ModelLoadError, match="not in the local Hugging Face cache and HF_HUB_OFFLINE is set"):
        load("Dream-org/Dream-Coder-v0-Instruct-7B")


def test_not_a_model_spec(tmp_path):
    with pytest.raises(ModelLoadError, match="no such folder"):
        load(str(tmp_path / "missing" / "x" / "y"))


def test_special_ids_come_from_config_not_generation_config(tiny_dream, tmp_path):
    folder = copy(tiny_dream, tmp_path)
    gen = json.loads((folder / "generation_config.json").read_text())
    assert gen["mask_token_id"] is None  # as in Dream's release
    cfg = json.loads((folder / "config.json").read_text())
    loaded = load(folder)
    assert loaded.special.mask_id == cfg["mask_token_id"]
    assert loaded.special.eos_id == cfg["eos_token_id"]
    assert loaded.tokenizer.convert_ids_to_tokens(loaded.special.mask_id) == "<|mask|>"


def test_llada_family_is_detected(tiny_llada):
    loaded = load(tiny_llada)
    assert loaded.family.name == "llada" and not loaded.family.shifted_logits
