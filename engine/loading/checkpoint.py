"""Hugging Face checkpoint folders: reading weights (safetensors only, sharded or not) and writing them.

Pickle weights (`pytorch_model.bin`, `*.pt`) are refused: loading them runs arbitrary code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file
from torch import nn

SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
PICKLE_PATTERNS = ("pytorch_model*.bin", "*.pt", "*.pth", "*.ckpt")


class CheckpointError(ValueError):
    pass


def read_json(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    except FileNotFoundError:
        raise CheckpointError(f"{path.parent}: no {path.name} (not a Hugging Face model folder)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path}: not valid JSON ({exc})") from None


def weight_files(folder: Path) -> list[Path]:
    """The safetensors files of a checkpoint, checked to exist."""
    if (folder / INDEX).exists():
        index = read_json(folder / INDEX)
        shards = sorted(set(index.get("weight_map", {}).values()))
        if not shards:
            raise CheckpointError(f"{folder / INDEX}: empty weight_map")
        missing = [s for s in shards if not (folder / s).exists()]
        if missing:
            raise CheckpointError(f"{folder}: missing weight shard(s) {', '.join(missing)} listed in {INDEX}")
        return [folder / s for s in shards]
    if (folder / SINGLE).exists():
        return [folder / SINGLE]
    loose = sorted(folder.glob("*.safetensors"))
    if loose:
        return loose
    pickles = [p.name for pattern in PICKLE_PATTERNS for p in folder.glob(pattern)]
    if pickles:
        raise CheckpointError(
            f"{folder}: only pickle weights ({', '.join(sorted(pickles))}); dcomplete loads safetensors only "
            "(convert with safetensors.torch.save_file on a trusted machine)"
        )
    raise CheckpointError(f"{folder}: no model weights (expected {SINGLE} or {INDEX})")


def iter_tensors(files: list[Path], device: torch.device) -> Iterator[tuple[str, torch.Tensor]]:
    for path in files:
        yield from read_safetensors(path, device).items()


def read_safetensors(path: Path, device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """Every tensor of one safetensors file; a truncated or corrupted file is a CheckpointError naming it."""
    try:
        with safe_open(str(path), framework="pt", device=str(device)) as f:
            return {name: f.get_tensor(name) for name in f.keys()}
    except (SafetensorError, OSError, ValueError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(f"{path}: not a readable safetensors file ({detail})") from None


def load_weights(
    model: nn.Module, files: list[Path], rename: Callable[[str], str], device: torch.device, dtype: torch.dtype,
    skip: str | None = None,
) -> None:
    """Fill a model built on the meta device with the checkpoint's tensors, by (renamed) parameter name;
    parameters under the prefix `skip` are not in the checkpoint and are left alone."""
    assign_weights(model, iter_tensors(files, device), rename, device, dtype, skip)


def assign_weights(
    model: nn.Module, tensors: Iterable[tuple[str, torch.Tensor]], rename: Callable[[str], str],
    device: torch.device, dtype: torch.dtype, skip: str | None = None,
) -> None:
    """`load_weights` from (name, tensor) pairs."""
    expected = {k: v for k, v in model.state_dict().items() if skip is None or not k.startswith(skip)}
    state: dict[str, torch.Tensor] = {}
    for name, tensor in tensors:
        ours = rename(name)
        if ours in expected:
            if tuple(tensor.shape) != tuple(expected[ours].shape):
                raise CheckpointError(
                    f"parameter {name}: shape {tuple(tensor.shape)} in the checkpoint, "
                    f"{tuple(expected[ours].shape)} in its config"
                )
            state[ours] = tensor.to(device=device, dtype=dtype)
    tied = getattr(getattr(model, "shape", None), "tie_word_embeddings", False)
    missing = [k for k in expected if k not in state and not (tied and k == "lm_head.weight")]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise CheckpointError(f"checkpoint lacks {len(missing)} parameter(s): {shown}")
    model.load_state_dict(state, strict=False, assign=True)
    if tied:
        model.get_submodule("lm_head").weight = model.get_submodule("model.embed_tokens").weight


def save_checkpoint(
    folder: str | Path,
    model: nn.Module,
    tokenizer: Any | None = None,
    generation_config: dict[str, Any] | None = None,
) -> Path:
    """Write `model` (with a `config.to_hf()`) as a Hugging Face folder: config.json, model.safetensors,
    optional generation_config.json and tokenizer files."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    config = model.config.to_hf()  # type: ignore[union-attr, operator]
    state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
    if config.get("tie_word_embeddings"):
        state.pop("lm_head.weight", None)
    save_file(state, str(out / SINGLE), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    if generation_config is not None:
        (out / "generation_config.json").write_text(json.dumps(generation_config, indent=2) + "\n")
    if tokenizer is not None:
        tokenizer.save_pretrained(str(out))
    return out
