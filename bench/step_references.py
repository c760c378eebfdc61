"""The references bench.step times beside the engine's step: `transformers`' LlamaForCausalLM over the same
dequantized base weights with its KV cache, and llama.cpp on the same GGUF file (llama-cpp-python, only when
installed: it is never a dependency)."""

from __future__ import annotations

import json

import torch

from engine import Engine


def transformers_model(engine: Engine) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    s = engine.loaded.model.shape
    cfg = LlamaConfig(vocab_size=s.vocab_size, hidden_size=s.hidden_size, intermediate_size=s.intermediate_size,
                      num_hidden_layers=s.num_hidden_layers, num_attention_heads=s.num_attention_heads,
                      num_key_value_heads=s.num_key_value_heads, rms_norm_eps=s.rms_norm_eps,
                      rope_theta=s.rope_theta, max_position_embeddings=s.max_position_embeddings,
                      tie_word_embeddings=s.tie_word_embeddings, attn_implementation="sdpa")
    model = LlamaForCausalLM(cfg).eval()
    ours = {k: v for k, v in engine.loaded.model.state_dict().items() if not k.startswith("adapter.")}
    missing, _ = model.load_state_dict({k: v.float() for k, v in ours.items()}, strict=False)
    assert not [m for m in missing if "rotary" not in m], missing
    return model


class TransformersStep:
    def __init__(self, model: torch.nn.Module, prefix: list[int]) -> None:
        from transformers import DynamicCache

        self.model = model
        self.prefix = torch.tensor([prefix])
        self.n = len(prefix)
        self.cache = DynamicCache()
        with torch.inference_mode():
            model(self.prefix, past_key_values=self.cache, use_cache=True)

    def step(self, rows: int) -> None:
        with torch.inference_mode():
            self.model(self.prefix[:, -rows:], past_key_values=self.cache, use_cache=True)
        self.cache.crop(-rows)

    def prefill(self) -> None:
        from transformers import DynamicCache

        with torch.inference_mode():
            self.model(self.prefix, past_key_values=DynamicCache(), use_cache=True)


class LlamaCppStep:
    """llama.cpp on the GGUF file the bundled base ships in, when llama-cpp-python is installed."""

    def __init__(self, gguf: str, prefix: list[int], threads: int) -> None:
        from llama_cpp import Llama

        self.llm = Llama(model_path=gguf, n_ctx=2048, n_threads=threads, n_threads_batch=threads,
                         n_batch=2048, verbose=False)
        self.prefix = prefix
        self.llm.reset()
        self.llm.eval(prefix)

    def step(self, rows: int) -> None:
        self.llm.n_tokens = len(self.prefix)
        self.llm._ctx.kv_cache_seq_rm(-1, len(self.prefix), -1)
        self.llm.eval(self.prefix[-rows:])

    def prefill(self) -> None:
        self.llm.reset()
        self.llm._ctx.kv_cache_clear()
        self.llm.eval(self.prefix)


def llama_cpp_kernels() -> str | None:
    """The CPU features llama.cpp was built with and uses here (its load log's `system_info` line), or None
    when llama-cpp-python is not installed: a figure against it names what it ran."""
    try:
        import llama_cpp
    except ImportError:
        return None
    return str(llama_cpp.llama_print_system_info().decode()).strip(" |")


def llama_cpp(engine: Engine, prefix: list[int], threads: int) -> LlamaCppStep | None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return None
    from engine.loading.gguf_base import locate

    config = json.loads((engine.loaded.folder / "config.json").read_text())
    return LlamaCppStep(str(locate(config["base"])), prefix, threads)
