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

from engine.loading.checkpoint import save_checkpoint
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
            **tiny_shape(overrides.pop("vocab_size", vocab), **overrides),
            mask_token_id=ids["mask"], bos_token_id=ids["bos"], eos_token_id=ids["eos"], pad_token_id=ids["eos"],
        )
        model = DreamModel(cfg)
        _randomize(model, seed)
        return save_checkpoint(folder, model, tokenizer, {"mask_token_id": None, "eos_token_id": ids["eos"]})
    if family == "llada":
        return _write_llada(Path(folder), tokenizer, ids, seed, overrides)
    raise ValueError(f"unknown family {family!r}")


def make_one_token_checkpoint(folder: Path, token: str = "x") -> Path:
    """A tiny Dream checkpoint that writes `token` at every masked position, with near-certainty.

    Built from `make_tiny_checkpoint`'s random checkpoint: attention and MLP outputs are zeroed, so each
    position's final state is its own embedding; every embedding gets a +1 in dimension 0, and only
    `token`'s output row reads that dimension. The real loader, engine and infill run unchanged, and
    "xxxx…" is an identifier, so a filled hole still parses: multi-spot edits become deterministic.
    """
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    make_tiny_checkpoint(folder)
    weights = load_file(str(folder / "model.safetensors"))
    for name, tensor in weights.items():
        if name.endswith(("self_attn.o_proj.weight", "mlp.down_proj.weight")):
            tensor.zero_()
    weights["model.embed_tokens.weight"][:, 0] = 1.0
    token_id = Tokenizer.from_file(str(folder / "tokenizer.json")).token_to_id(token)
    weights["lm_head.weight"].zero_()
    weights["lm_head.weight"][token_id, 0] = 50.0
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


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


def write_tiny_gguf(path: str | Path, seed: int = 0, blocks: str | None = None,
                    **overrides: Any) -> dict[str, torch.Tensor]:
    """A random Llama-architecture GGUF file (F32 tensors, q/k rows in llama.cpp's order, and the tiny
    BPE tokenizer in the GGUF "gpt2" form) like the bundled SmolLM2 one; returns its weights in Hugging Face
    layout and names, for comparison. `blocks` ("Q4_1", ...): the layers' projections in that block format,
    as the bundled file has them (the weights returned are those before quantizing)."""
    import gguf
    from gguf.quants import quantize

    tokenizer = tiny_tokenizer()
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    s = tiny_shape(len(tokens), **{"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, **overrides})
    shape = ModelShape(**{**s, "qkv_bias": False, "tie_word_embeddings": True})
    model = Transformer(shape)
    _randomize(model, seed)
    state = {k: v.detach().clone() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(shape.num_hidden_layers)
    writer.add_context_length(shape.max_position_embeddings)
    writer.add_embedding_length(shape.hidden_size)
    writer.add_feed_forward_length(shape.intermediate_size)
    writer.add_head_count(shape.num_attention_heads)
    writer.add_head_count_kv(shape.num_key_value_heads)
    writer.add_layer_norm_rms_eps(shape.rms_norm_eps)
    writer.add_rope_freq_base(shape.rope_theta)
    writer.add_vocab_size(len(tokens))
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([3 if t in SPECIALS.values() else 1 for t in tokens])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(vocab[SPECIALS["bos"]])
    writer.add_eos_token_id(vocab[SPECIALS["eos"]])
    names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    for name, tensor in state.items():
        values = tensor.numpy()
        if name == "model.embed_tokens.weight":
            target = "token_embd.weight"
        elif name == "model.norm.weight":
            target = "output_norm.weight"
        else:
            _, _, layer, part = name.split(".", 3)
            part = part.rsplit(".", 1)[0]
            target = f"blk.{layer}.{names[part]}.weight"
            heads = {"attn_q": shape.num_attention_heads, "attn_k": shape.num_key_value_heads}.get(names[part])
            if heads:  # llama.cpp's converter: rows (heads, 2, half) -> (heads, half, 2)
                values = values.reshape(heads, 2, values.shape[0] // heads // 2, values.shape[1]).swapaxes(1, 2)
                values = values.reshape(tensor.shape)
        if blocks is not None and target.startswith("blk.") and values.ndim == 2:
            kind = gguf.GGMLQuantizationType[blocks]
            writer.add_tensor(target, quantize(values.astype("float32"), kind), raw_dtype=kind)
            continue
        writer.add_tensor(target, values.astype("float32"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return state


def make_tiny_anchored(folder: str | Path, seed: int = 0, gap_room: int = 16, blocks: str | None = None) -> Path:
    """An anchored checkpoint: a tiny GGUF base (base.gguf, in the folder; `blocks`: `write_tiny_gguf`'s) plus
    a random adapter whose LoRA, mask embedding and right bias are all non-zero, so every path the adapter
    opens is exercised."""
    from engine.models.anchored import AdapterShape, AnchoredModel

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    write_tiny_gguf(out / "base.gguf", seed, blocks)
    tokenizer = tiny_tokenizer()
    eos = tokenizer.convert_tokens_to_ids(SPECIALS["eos"])
    shape = ModelShape(**{**tiny_shape(len(tokenizer), hidden_size=64, num_attention_heads=4, num_key_value_heads=2),
                          "qkv_bias": False, "tie_word_embeddings": True})
    adapter_shape = AdapterShape(rank=4, alpha=8.0, gap_room=gap_room, max_right=64)
    model = AnchoredModel(shape, adapter_shape)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for p in model.adapter.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=gen))
        model.adapter.right_bias.fill_(-1.0)
    state = {k: v.contiguous() for k, v in model.adapter.state_dict().items()}
    save_file(state, str(out / "adapter.safetensors"), metadata={"format": "pt"})
    config = {"model_type": "anchored", "architectures": ["AnchoredDiffusionLM"], "base": str(out / "base.gguf"),
              "adapter": adapter_shape.__dict__, "mask_token_id": shape.vocab_size, "bos_token_id": eos,
              "eos_token_id": eos, "pad_token_id": eos, "max_position_embeddings": shape.max_position_embeddings}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    return out
