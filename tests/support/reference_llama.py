"""An independent causal implementation of a loaded anchored model's base: transformers' Llama with its
weights, for tests that check the engine's decoding and margins against it."""

from __future__ import annotations

from transformers import LlamaConfig, LlamaForCausalLM

from engine import Engine


def reference_llama(engine: Engine) -> LlamaForCausalLM:
    """An independent causal implementation with the base weights: transformers' Llama."""
    s = engine.loaded.model.shape
    ref = LlamaForCausalLM(LlamaConfig(
        vocab_size=s.vocab_size, hidden_size=s.hidden_size, intermediate_size=s.intermediate_size,
        num_hidden_layers=s.num_hidden_layers, num_attention_heads=s.num_attention_heads,
        num_key_value_heads=s.num_key_value_heads, rms_norm_eps=s.rms_norm_eps, rope_theta=s.rope_theta,
        max_position_embeddings=s.max_position_embeddings, tie_word_embeddings=True, attention_bias=False,
        attn_implementation="sdpa"))
    state = {k: v for k, v in engine.loaded.model.state_dict().items() if not k.startswith("adapter.")}
    ref.load_state_dict(state, strict=False)
    ref.tie_weights()
    return ref.eval()
