"""Tiny random block-diffusion checkpoints in each family's real layout, for tests and benchmarks.

`make_tiny_block_checkpoint(folder, family)` writes config.json (the family's real `model_type`,
`architectures` and `auto_map`), model.safetensors under the names the released checkpoints use, and a
tokenizer (`tests.support.checkpoints.tiny_tokenizer`). SDAR and Fast-dLLM v2 weights are written by transformers'
own Qwen3 / Qwen2 classes (their checkpoints are those layouts), LLaDA2's under Ling-v2's names, and
DiffusionGemma's by `DiffusionGemmaForBlockDiffusion.save_pretrained`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from engine.models.fast_dllm import MASK_TOKEN as FAST_DLLM_MASK
from tests.support.checkpoints import SPECIALS, tiny_shape, tiny_tokenizer
from tests.support.checkpoints import _randomize as _randomize_all

# The output projection is scaled up so that the random model is confident at many positions: the
# threshold rule then commits several tokens a step, as a trained model does.
HEAD_SCALE = 6.0


def _randomize(model: torch.nn.Module, seed: int) -> None:
    _randomize_all(model, seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("lm_head.weight"):
                p.mul_(HEAD_SCALE)


AUTO_MAP = {
    "sdar": {"AutoConfig": "configuration_sdar.SDARConfig", "AutoModel": "modeling_sdar.SDARModel",
             "AutoModelForCausalLM": "modeling_sdar.SDARForCausalLM"},
    "fast_dllm": {"AutoConfig": "configuration.Fast_dLLM_QwenConfig", "AutoModel": "modeling.Fast_dLLM_QwenModel",
                  "AutoModelForCausalLM": "modeling.Fast_dLLM_QwenForCausalLM"},
    "llada2": {"AutoConfig": "configuration_llada2_moe.LLaDA2MoeConfig",
               "AutoModel": "modeling_llada2_moe.LLaDA2MoeModel",
               "AutoModelForCausalLM": "modeling_llada2_moe.LLaDA2MoeModelLM"},
}


def make_tiny_block_checkpoint(folder: str | Path, family: str, seed: int = 0, block_size: int = 4,
                               **overrides: Any) -> Path:
    """A random checkpoint of `family` ("sdar", "fast_dllm", "llada2" or "diffusion_gemma")."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = tiny_tokenizer()
    if family == "fast_dllm":  # its mask is an added token the tokenizer does not call its mask token
        tokenizer.add_special_tokens({"additional_special_tokens": [FAST_DLLM_MASK]})
        tokenizer.mask_token = None
    ids = {k: tokenizer.convert_tokens_to_ids(v) for k, v in SPECIALS.items()}
    writers = {"sdar": _write_qwen, "fast_dllm": _write_qwen, "llada2": _write_llada2,
               "diffusion_gemma": _write_diffusion_gemma}
    if family not in writers:
        raise ValueError(f"unknown family {family!r}")
    config = writers[family](out, family, len(tokenizer), ids, seed, block_size, overrides)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tokenizer.save_pretrained(str(out))
    return out


def _write_qwen(out: Path, family: str, vocab: int, ids: dict[str, int], seed: int, block: int,
                overrides: dict[str, Any]) -> dict[str, Any]:
    from transformers import Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

    shape = tiny_shape(overrides.pop("vocab_size", vocab), **overrides)
    if family == "sdar":
        shape.setdefault("head_dim", 32)  # Qwen3 heads wider than hidden / heads, as SDAR-4B's
        config, model_class = Qwen3Config(**shape, attention_bias=False), Qwen3ForCausalLM
    else:
        config, model_class = Qwen2Config(**shape), Qwen2ForCausalLM
    torch.manual_seed(seed)
    model = model_class(config)
    _randomize(model, seed)
    model.save_pretrained(str(out), safe_serialization=True)
    saved = json.loads((out / "config.json").read_text())
    if family == "sdar":
        saved.update(model_type="sdar", architectures=["SDARForCausalLM"], block_size=block)
    else:
        saved.update(model_type="Fast_dLLM_Qwen", architectures=["Fast_dLLM_QwenForCausalLM"], bd_size=block)
    saved.update(auto_map=AUTO_MAP[family], bos_token_id=ids["bos"], eos_token_id=ids["eos"],
                 pad_token_id=ids["eos"])
    return saved


LLADA2_PARTS = {"self_attn.query_key_value": "attention.query_key_value", "self_attn.o_proj": "attention.dense",
                "self_attn.q_norm": "attention.query_layernorm", "self_attn.k_norm": "attention.key_layernorm"}


def llada2_config(vocab: int, block: int, **overrides: Any) -> dict[str, Any]:
    """A tiny LLaDA2.x config.json (LLaDA2.1-mini's keys): one dense layer, then experts in 2 groups."""
    config = {
        "model_type": "llada2_moe", "architectures": ["LLaDA2MoeModelLM"], "auto_map": AUTO_MAP["llada2"],
        "vocab_size": vocab, "hidden_size": 64, "intermediate_size": 96, "moe_intermediate_size": 16,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "num_experts": 8, "num_experts_per_tok": 2, "num_shared_experts": 1, "n_group": 2, "topk_group": 1,
        "routed_scaling_factor": 2.5, "first_k_dense_replace": 1, "score_function": "sigmoid",
        "partial_rotary_factor": 0.5, "rope_theta": 600000.0, "rms_norm_eps": 1e-6, "use_qk_norm": True,
        "use_qkv_bias": False, "use_bias": False, "norm_head": False, "tie_word_embeddings": False,
        "max_position_embeddings": 1024, "block_size": block,
    }
    config.update(overrides)
    return config


def _write_llada2(out: Path, family: str, vocab: int, ids: dict[str, int], seed: int, block: int,
                  overrides: dict[str, Any]) -> dict[str, Any]:
    from engine.models.llada2 import LLaDA2Model, shape

    config = llada2_config(vocab, block, **overrides)
    config.update(mask_token_id=ids["mask"], eos_token_id=ids["eos"], pad_token_id=ids["eos"])
    torch.manual_seed(seed)
    model = LLaDA2Model(shape(config))
    _randomize(model, seed)
    state = {}
    for name, tensor in model.state_dict().items():
        for ours, theirs in LLADA2_PARTS.items():
            name = name.replace(ours, theirs)
        state[name.replace("model.embed_tokens.", "model.word_embeddings.")] = tensor.contiguous()
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    return config


def _write_diffusion_gemma(out: Path, family: str, vocab: int, ids: dict[str, int], seed: int, block: int,
                           overrides: dict[str, Any]) -> dict[str, Any]:
    from transformers import DiffusionGemmaConfig, DiffusionGemmaForBlockDiffusion

    text = {"vocab_size": vocab, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 32,
            "sliding_window": 32, "max_position_embeddings": 1024,
            "layer_types": ["sliding_attention", "full_attention"], "num_experts": 4, "top_k_experts": 2,
            "moe_intermediate_size": 32, "pad_token_id": ids["eos"], "eos_token_id": ids["eos"],
            "bos_token_id": ids["bos"]}
    vision = {"model_type": "gemma4_vision", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
              "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "position_embedding_size": 64}
    config = DiffusionGemmaConfig(text_config={**text, **overrides}, vision_config=vision, canvas_length=block,
                                  boi_token_id=vocab - 3, eoi_token_id=vocab - 2, image_token_id=vocab - 1)
    torch.manual_seed(seed)
    model = DiffusionGemmaForBlockDiffusion(config)
    _randomize(model, seed)
    model.save_pretrained(str(out), safe_serialization=True)
    generation = {"max_new_tokens": 256, "max_denoising_steps": 8, "t_min": 0.4, "t_max": 0.8,
                  "sampler_config": {"entropy_bound": 0.1, "_cls_name": "EntropyBoundSamplerConfig"},
                  "stability_threshold": 1, "confidence_threshold": 0.005, "eos_token_id": [ids["eos"]],
                  "pad_token_id": ids["eos"], "bos_token_id": ids["bos"]}
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
    return json.loads((out / "config.json").read_text())
