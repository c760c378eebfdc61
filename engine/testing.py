"""Tiny random checkpoints in Hugging Face format, for tests and benchmarks that must not download.

`make_tiny_checkpoint(folder)` writes config.json, model.safetensors and a real byte-level BPE tokenizer
(trained in a second on a few standard-library modules), so the whole loading path runs as it does for a
downloaded checkpoint.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from engine.checkpoint import save_checkpoint
from engine.models.dream import DreamConfig, DreamModel
from engine.models.layers import apply_rotary, rotary_tables
from engine.models.llada import checkpoint_names
from engine.models.transformer import ModelShape, Transformer

SPECIALS = {"eos": "<|endoftext|>", "bos": "<|beginoftext|>", "mask": "<|mask|>"}


@lru_cache(maxsize=4)
def _tokenizer_json(vocab_size: int) -> str:
    import argparse
    import difflib
    import textwrap

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    text = [Path(m.__file__).read_text(encoding="utf-8") for m in (argparse, difflib, textwrap)]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[SPECIALS["eos"], SPECIALS["bos"], SPECIALS["mask"]],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(text, trainer)
    return tok.to_str()


def tiny_tokenizer(vocab_size: int = 600) -> Any:
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_tokenizer_json(vocab_size)),
        bos_token=SPECIALS["bos"],
        eos_token=SPECIALS["eos"],
        pad_token=SPECIALS["eos"],
        mask_token=SPECIALS["mask"],
    )


def tiny_shape(vocab_size: int, **overrides: Any) -> dict[str, Any]:
    shape = dict(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        max_position_embeddings=1024,
    )
    shape.update(overrides)
    return shape


def _randomize(model: torch.nn.Module, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("layernorm.weight") or name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(0.2 * torch.randn(p.shape, generator=gen))


def make_tiny_checkpoint(folder: str | Path, family: str = "dream", seed: int = 0, **overrides: Any) -> Path:
    """A random checkpoint of `family` ("dream" or "llada") with a tokenizer, written to `folder`."""
    tokenizer = tiny_tokenizer()
    vocab = len(tokenizer)
    ids = {k: tokenizer.convert_tokens_to_ids(v) for k, v in SPECIALS.items()}
    torch.manual_seed(seed)
    if family == "dream":
        cfg = DreamConfig(
            **tiny_shape(vocab, **overrides),
            mask_token_id=ids["mask"], bos_token_id=ids["bos"], eos_token_id=ids["eos"], pad_token_id=ids["eos"],
        )
        model = DreamModel(cfg)
        _randomize(model, seed)
        return save_checkpoint(folder, model, tokenizer, {"mask_token_id": None, "eos_token_id": ids["eos"]})
    if family == "llada":
        return _write_llada(Path(folder), tokenizer, ids, seed, overrides)
    raise ValueError(f"unknown family {family!r}")


def _write_llada(folder: Path, tokenizer: Any, ids: dict[str, int], seed: int, overrides: dict[str, Any]) -> Path:
    s = tiny_shape(len(tokenizer), **overrides)
    shape = ModelShape(**{**s, "qkv_bias": False})
    model = Transformer(shape)
    _randomize(model, seed)
    names = checkpoint_names(shape.num_hidden_layers)
    state = {names[k]: v.contiguous() for k, v in model.state_dict().items()}
    folder.mkdir(parents=True, exist_ok=True)
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "model_type": "llada", "architectures": ["LLaDAModelLM"], "block_type": "llama",
        "d_model": s["hidden_size"], "n_layers": s["num_hidden_layers"], "n_heads": s["num_attention_heads"],
        "n_kv_heads": s["num_key_value_heads"], "mlp_hidden_size": s["intermediate_size"],
        "vocab_size": s["vocab_size"], "embedding_size": s["vocab_size"], "rope_theta": s["rope_theta"],
        "rms_norm_eps": s["rms_norm_eps"], "max_sequence_length": s["max_position_embeddings"],
        "include_bias": False, "weight_tying": False, "rope": True, "activation_type": "silu",
        "layer_norm_type": "rms", "mask_token_id": ids["mask"], "eos_token_id": ids["eos"],
        "pad_token_id": ids["eos"],
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tokenizer.save_pretrained(str(folder))
    return folder


def layer0_keys(model: Transformer, ids: list[int]) -> torch.Tensor:
    """Post-RoPE keys (H_kv, T, D) of the first layer for a canvas. They depend only on each position's
    token and index, so any cached layer-0 key can be checked exactly against them."""
    attn = model.model.layers[0].self_attn
    with torch.inference_mode():
        x = model.model.layers[0].input_layernorm(model.model.embed_tokens(torch.tensor([ids])))
        k = attn.k_proj(x).view(1, len(ids), attn.kv_heads, attn.head_dim).transpose(1, 2)
        cos, sin = rotary_tables(torch.arange(len(ids))[None], attn.head_dim, model.shape.rope_theta, k.dtype)
        return apply_rotary(k, cos, sin)[0]
