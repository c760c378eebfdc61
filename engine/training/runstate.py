"""A training run's folder: resumable checkpoints, the best weights so far, the log, and HF export.

runs/NAME/
  state.pt    model + optimizer + step + elapsed seconds + RNG states + run arguments (for --resume)
  best.pt     model weights and config with the lowest validation loss so far
  log.jsonl   one JSON object per logged event (train / val / checkpoint)
Writes go to a temporary file first and are renamed into place.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.checkpoint import save_checkpoint
from engine.models.dream import DreamConfig, DreamModel

STATE = "state.pt"
BEST = "best.pt"
LOG = "log.jsonl"


def atomic_torch_save(obj: Any, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


def rng_state(data_rng: random.Random) -> dict[str, Any]:
    return {"python": data_rng.getstate(), "torch": torch.get_rng_state(), "numpy": np.random.get_state()}


def restore_rng(state: dict[str, Any], data_rng: random.Random) -> None:
    data_rng.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])


def save_state(
    run: Path,
    model: DreamModel,
    optimizer: torch.optim.Optimizer,
    step: int,
    elapsed: float,
    best_val: float | None,
    data_rng: random.Random,
    args: dict[str, Any],
) -> None:
    atomic_torch_save(
        {
            "config": model.config.to_hf(),
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "step": step,
            "elapsed": elapsed,
            "best_val": best_val,
            "rng": rng_state(data_rng),
            "args": args,
        },
        run / STATE,
    )


def load_state(run: Path) -> dict[str, Any]:
    path = run / STATE
    if not path.exists():
        raise SystemExit(f"{path}: no checkpoint to resume from")
    return torch.load(path, map_location="cpu", weights_only=False)


def load_best(run: Path) -> dict[str, Any]:
    path = run / BEST
    if not path.exists():
        raise SystemExit(f"{path}: no best checkpoint to start from")
    return torch.load(path, map_location="cpu", weights_only=False)


def save_best(run: Path, model: DreamModel, step: int, val_loss: float) -> None:
    atomic_torch_save(
        {"config": model.config.to_hf(), "model": model.state_dict(), "step": step, "val_loss": val_loss},
        run / BEST,
    )


def log_event(run: Path, **fields: Any) -> None:
    fields.setdefault("time", round(time.time(), 1))
    with (run / LOG).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(fields) + "\n")


def generation_config(cfg: DreamConfig, max_length: int) -> dict[str, Any]:
    return {
        "bos_token_id": cfg.bos_token_id,
        "eos_token_id": cfg.eos_token_id,
        "pad_token_id": cfg.pad_token_id,
        "mask_token_id": cfg.mask_token_id,
        "alg": "maskgit_plus",
        "alg_temp": 0.0,
        "steps": 64,
        "eps": 1e-3,
        "temperature": 0.0,
        "max_length": max_length,
    }


def export(run: Path, target: Path, tokenizer_dir: Path, which: str = "best") -> dict[str, Any]:
    """Write the run's best (or latest) weights as a Hugging Face folder, replacing `target` atomically."""
    from engine.training.tokenizer import load_tokenizer, write_tokenizer_files

    source = run / (BEST if which == "best" else STATE)
    if not source.exists():
        raise SystemExit(f"{source}: nothing to export yet")
    saved = torch.load(source, map_location="cpu", weights_only=False)
    cfg = DreamConfig.from_hf(saved["config"])
    model = DreamModel(cfg)
    model.load_state_dict(saved["model"])
    target = target.resolve()
    staging = target.with_name(target.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    save_checkpoint(
        staging, model, tokenizer=None, generation_config=generation_config(cfg, cfg.max_position_embeddings)
    )
    write_tokenizer_files(load_tokenizer(tokenizer_dir), staging)
    info = {"run": str(run), "step": saved["step"], "val_loss": saved.get("val_loss", saved.get("best_val"))}
    (staging / "training_info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    for file in staging.iterdir():
        file.chmod(0o644)  # safetensors writes 0600; the folder ships inside the package
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return info
