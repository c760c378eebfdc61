"""Forward parity of our model families against independent reference implementations in transformers."""

from __future__ import annotations

import json

import torch
from safetensors.torch import load_file
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from engine.families.registry import load
from engine.models.llada import checkpoint_names


def _bidirectional_mask(batch: int, length: int) -> torch.Tensor:
    return torch.zeros(batch, 1, length, length)  # additive 4D mask of zeros: every position sees every other


def test_dream_matches_transformers_qwen2_run_bidirectionally(tiny_dream):
    ours = load(tiny_dream, device="cpu")
    cfg = json.loads((tiny_dream / "config.json").read_text())
    ref = Qwen2ForCausalLM(Qwen2Config(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")},
                                       attn_implementation="sdpa"))
    missing, unexpected = ref.load_state_dict(load_file(tiny_dream / "model.safetensors"), strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}
    ref.eval()
    ids = torch.randint(0, cfg["vocab_size"], (2, 23), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = ref(input_ids=ids, attention_mask=_bidirectional_mask(2, 23)).logits
        got = ours.model(ids)
    assert torch.allclose(got, expected, atol=1e-4, rtol=1e-4), (got - expected).abs().max()
    # Sanity: the reference really is bidirectional (a causal run differs), so the comparison has teeth.
    with torch.no_grad():
        causal = ref(input_ids=ids).logits
    assert not torch.allclose(causal, expected, atol=1e-3)


def test_llada_matches_transformers_llama_with_mapped_weights(tiny_llada):
    ours = load(tiny_llada, device="cpu")
    cfg = json.loads((tiny_llada / "config.json").read_text())
    ref = LlamaForCausalLM(LlamaConfig(
        vocab_size=cfg["vocab_size"], hidden_size=cfg["d_model"], intermediate_size=cfg["mlp_hidden_size"],
        num_hidden_layers=cfg["n_layers"], num_attention_heads=cfg["n_heads"],
        num_key_value_heads=cfg["n_kv_heads"], rms_norm_eps=cfg["rms_norm_eps"], rope_theta=cfg["rope_theta"],
        max_position_embeddings=cfg["max_sequence_length"], attention_bias=False, mlp_bias=False,
        tie_word_embeddings=False, attn_implementation="sdpa",
    ))
    theirs = load_file(tiny_llada / "model.safetensors")
    names = checkpoint_names(ours.model.shape.num_hidden_layers)
    ref.load_state_dict({ours_name: theirs[llada_name] for ours_name, llada_name in names.items()})
    ref.eval()
    ids = torch.randint(0, cfg["vocab_size"], (2, 19), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        expected = ref(input_ids=ids, attention_mask=_bidirectional_mask(2, 19)).logits
        got = ours.model(ids)
    assert torch.allclose(got, expected, atol=1e-4, rtol=1e-4), (got - expected).abs().max()
