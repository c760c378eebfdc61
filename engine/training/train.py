"""Train the bundled default model (a small Dream-family masked-diffusion LM) on the corpus.

    python -m engine.training.train --out runs/NAME [--preset cpu] [--minutes 75] [--resume]
    python -m engine.training.train --out runs/NAME --export engine/default_model   # best -> HF folder
    python -m engine.training.train --out runs/NAME --bench 30                      # tokens/s of a shape

Batches mix packed plain windows and infill canvases (data.py); the loss is the Dream objective
(objective.py). With --minutes the learning-rate schedule runs on wall time, so a run shares a busy CPU
and still ends its cosine decay on time; --steps schedules on steps instead.
"""

from __future__ import annotations

import argparse
import math
import queue
import random
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from engine.models.dream import DreamConfig, DreamModel
from engine.training import runstate
from engine.training.corpus import CORPUS_DIR
from engine.training.data import SpecialIds, TokenizedCorpus, make_batch
from engine.training.objective import add_noise, diffusion_loss
from engine.training.tokenizer import TOKENIZER_DIR


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int


PRESETS = {
    "tiny": Shape(64, 2, 2, 1, 192),
    "cpu-small": Shape(256, 4, 4, 2, 704),
    "cpu": Shape(256, 6, 4, 2, 704),
    "cpu-wide": Shape(320, 6, 5, 5, 864),
    "gpu": Shape(512, 10, 8, 4, 1408),
}


def build_model(shape: Shape, vocab_size: int, seq_len: int, special: SpecialIds) -> DreamModel:
    cfg = DreamConfig(
        vocab_size=vocab_size,
        hidden_size=shape.hidden,
        intermediate_size=shape.ffn,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        max_position_embeddings=seq_len,
        tie_word_embeddings=True,
        mask_token_id=special.mask,
        bos_token_id=special.bos,
        eos_token_id=special.eos,
        pad_token_id=special.eos,
    )
    model = DreamModel(cfg)
    init_weights(model, shape.layers)
    return model


def init_weights(model: DreamModel, layers: int) -> None:
    """GPT-2 style: N(0, 0.02), zero biases, residual output projections scaled by 1/sqrt(2 * layers)."""
    for name, param in model.named_parameters():
        if name.endswith("bias"):
            torch.nn.init.zeros_(param)
        elif "norm" in name:
            torch.nn.init.ones_(param)
        else:
            std = (
                0.02 / math.sqrt(2 * layers) if name.endswith(("o_proj.weight", "down_proj.weight")) else 0.02
            )
            torch.nn.init.normal_(param, std=std)


def make_optimizer(model: DreamModel, lr: float, weight_decay: float) -> torch.optim.AdamW:
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    rest = [p for n, p in model.named_parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)


def learning_rate(args: argparse.Namespace, step: int, progress: float) -> float:
    warm = min(1.0, (step + 1) / max(1, args.warmup))
    floor = args.min_lr_ratio
    cosine = floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return args.lr * warm * cosine


class Prefetcher:
    """Builds batches on a background thread (tokenising and ast work overlaps the forward pass)."""

    def __init__(self, corpus: TokenizedCorpus, rng: random.Random, args: argparse.Namespace) -> None:
        self.queue: queue.Queue[tuple[torch.Tensor, torch.Tensor]] = queue.Queue(maxsize=4)
        self.args, self.corpus, self.rng = args, corpus, rng
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            a = self.args
            self.queue.put(make_batch(self.corpus, self.rng, a.batch_size, a.seq_len, a.infill_fraction))

    def next(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.queue.get()


def validation_batches(corpus: TokenizedCorpus, args: argparse.Namespace) -> list[tuple[str, Any, Any, Any]]:
    """Fixed held-out batches (plain and infill), each with fixed masks at stratified noise levels."""
    rng = random.Random(1234)
    generator = torch.Generator().manual_seed(1234)
    out = []
    for kind, fraction in (("plain", 0.0), ("infill", 1.0)):
        for _ in range(args.eval_batches):
            ids, maskable = make_batch(corpus, rng, args.batch_size, args.seq_len, fraction)
            t = (torch.arange(args.batch_size) + 0.5) / args.batch_size
            out.append((kind, ids, maskable, add_noise(ids, maskable, corpus.special.mask, generator, t=t)))
    return out


@torch.no_grad()
def evaluate(
    model: DreamModel, batches: list[tuple[str, Any, Any, Any]], device: torch.device
) -> dict[str, float]:
    model.eval()
    sums: dict[str, list[float]] = {}
    for kind, ids, maskable, noised in batches:
        with autocast(device):
            loss, ce = diffusion_loss(model, ids.to(device), maskable.to(device), noised.to(device))
        sums.setdefault(f"val_loss_{kind}", []).append(loss.item())
        sums.setdefault(f"val_ce_{kind}", []).append(ce.item())
    model.train()
    result = {k: sum(v) / len(v) for k, v in sums.items()}
    result["val_loss"] = (result["val_loss_plain"] + result["val_loss_infill"]) / 2
    return result


def autocast(device: torch.device):
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", enabled=False)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="run folder, e.g. runs/NAME")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--init-from", type=Path, default=None,
                   help="start a new run from another run's best weights (fresh optimizer and schedule)")
    p.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    for name in ("hidden", "layers", "heads", "kv-heads", "ffn"):
        p.add_argument(f"--{name}", type=int, default=None, help="override the preset")
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--min-lr-ratio", type=float, default=0.1)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--steps", type=int, default=None, help="schedule on steps (default when no --minutes)")
    p.add_argument("--minutes", type=float, default=None, help="schedule on wall time and stop after it")
    p.add_argument("--infill-fraction", type=float, default=0.5)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--eval-batches", type=int, default=4)
    p.add_argument("--ckpt-minutes", type=float, default=5.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tokenizer", type=Path, default=TOKENIZER_DIR)
    p.add_argument("--corpus", type=Path, default=CORPUS_DIR)
    p.add_argument("--device", default=None)
    p.add_argument(
        "--bench", type=float, default=None, help="train this many seconds, print tokens/s, save nothing"
    )
    p.add_argument(
        "--export", type=Path, default=None, help="write the run's weights as an HF folder and exit"
    )
    p.add_argument("--export-which", choices=("best", "latest"), default="best")
    args = p.parse_args(argv)
    if args.steps is None and args.minutes is None and args.bench is None and args.export is None:
        p.error("give --steps or --minutes")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.export is not None:
        info = runstate.export(args.out, args.export, args.tokenizer, args.export_which)
        print(f"exported {args.out} ({args.export_which}: {info}) to {args.export}")
        return
    from engine.training.loop import train

    train(args)


if __name__ == "__main__":
    main()
