"""Train the anchored adapter of the bundled default model: an objective mix, a step schedule, resumable.

    python -m training.train_adapter --out runs/NAME --steps 4000 --minutes 600 [--threads 1] [--resume]
    python -m training.train_adapter --out runs/NAME --resume-from training/run_state   # a later session
    python -m training.train_adapter --out runs/NAME --bench 300      # windows/s, rows/s, memory; nothing saved
    python -m training.train_adapter --out runs/NAME --export engine/default_model

The base stays frozen; the optimizer sees the adapter only (mask embedding, LoRA, right-context bias), in
float32, while the forward runs in bfloat16 where the CPU has bfloat16 units (training.precision). The
learning rate follows the optimizer step (warmup, then cosine to 10 % at --steps), and --minutes counts
this process's CPU time, so a run paused with SIGSTOP (or slowed by other work) keeps its schedule.
SIGTERM or SIGINT save the state and exit. The run folder holds state.pt (everything, for --resume), best.pt
(the adapter with the best held-out score), compact/ (what a later session resumes from, RunFolder) and
log.jsonl (a `train` line every 10 steps, a `val` line per evaluation).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file

from engine.models.anchored import AdapterShape
from training import next_edit_examples, precision
from training.evaluate import EvalSet, evaluate
from training.gaps import Corpus
from training.headers import Headers
from training.objectives import DEFAULT_MIX, Sampler, Shape, parse_mix, parse_shares
from training.packed import loss_of, packed_logits
from training.run_folder import BASE, RunFolder, build_model, export, load_compact

CACHE = Path(__file__).resolve().parents[1] / "corpus_cache"
DEFAULT_LANGUAGES = "python=0.5,javascript=0.13,typescript=0.04,java=0.13,c=0.06,cpp=0.05,go=0.05,rust=0.04"
"""Half Python (HumanEval, SantaCoder-Python and the repository benchmark are Python), JavaScript and Java
next (SantaCoder's other two languages), the rest so that no language is new to the model."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--base", default=BASE, help="the base GGUF: package:file or a path")
    p.add_argument("--corpus", type=Path, default=CACHE / "corpus", help="folder with train.jsonl and val.jsonl")
    p.add_argument("--trees", type=Path, default=CACHE / "trees", help="the corpus laid out by package (headers)")
    p.add_argument("--edits", type=Path, default=CACHE / "next_edit", help="next-edit examples {train,val}.jsonl")
    p.add_argument("--mix", default=DEFAULT_MIX, help="objective shares, name=share,...")
    p.add_argument("--languages", default=DEFAULT_LANGUAGES,
                   help="corpus shares by language, name=share,... (files within a language by size); '' = by size")
    p.add_argument("--steps", type=int, default=4000, help="optimizer steps the schedule spans")
    p.add_argument("--minutes", type=float, default=60.0, help="CPU minutes this invocation trains (evals excluded)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", default="auto", help="auto (bfloat16 where the CPU has bfloat16 units), float32, bfloat16")
    p.add_argument("--window", type=int, default=512, help="tokens of file per example (a header comes on top)")
    p.add_argument("--points", type=int, default=6, help="gap ends per window")
    p.add_argument("--mask-blocks", type=int, default=2)
    p.add_argument("--block-masks", type=int, default=7, help="masks per mask block: the lookahead trained")
    p.add_argument("--accumulate", type=int, default=2, help="windows per optimizer step")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--bias-lr", type=float, default=2e-2, help="learning rate of the right-context bias")
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--rewarm", type=int, default=20, help="warmup steps after --resume-from (fresh optimizer)")
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--eval-every", type=int, default=100, help="steps between held-out evaluations")
    p.add_argument("--eval-windows", type=int, default=12, help="held-out windows per objective")
    p.add_argument("--ckpt-every", type=int, default=25, help="steps between checkpoints")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true", help="continue from the run folder's state.pt")
    p.add_argument("--resume-from", type=Path, help="continue from a compact state folder (RunFolder.save_compact)")
    p.add_argument("--init-from", type=Path, help="start from another run's best adapter (fresh optimizer and schedule)")
    p.add_argument("--init-adapter", type=Path, help="start from an adapter file (engine/default_model/adapter.safetensors)")
    p.add_argument("--right-bias", type=float, help="set the committed rows' right-context bias to this at the start")
    p.add_argument("--bench", type=float, help="train this many CPU seconds, print throughput, save nothing")
    p.add_argument("--export", type=Path, help="write the best adapter into this model folder and exit")
    return p.parse_args(argv)


def lr_factor(args: argparse.Namespace, step: int, restart: int | None) -> float:
    """Linear warmup, then cosine to 10% at --steps, by optimizer step; after a warm restart at step
    `restart`, a linear re-warmup over --rewarm steps on top."""
    if step < args.warmup:
        return (step + 1) / args.warmup
    progress = min(step / max(args.steps, 1), 1.0)
    factor = 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))
    if restart is not None and step - restart < args.rewarm:
        factor *= (step - restart + 1) / args.rewarm
    return factor


class Stop:
    """SIGTERM/SIGINT ask the loop to save and stop after the current step."""

    def __init__(self) -> None:
        self.asked = False
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._ask)

    def _ask(self, signum: int, frame: Any) -> None:
        self.asked = True


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    run = RunFolder(args.out)
    if args.export:
        print(json.dumps(export(run, args.export, args.base)))
        return
    mix = parse_mix(args.mix)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = precision.choose(args.dtype, device)
    model, tokenizer, special = build_model(args.base, AdapterShape(rank=args.rank), device)
    precision.prepare(model, dtype)
    params = list(model.adapter.parameters())
    bias = [model.adapter.right_bias]
    optimizer = torch.optim.AdamW([{"params": [p for p in params if p is not model.adapter.right_bias], "lr": args.lr},
                                   {"params": bias, "lr": args.bias_lr}], weight_decay=0.0, betas=(0.9, 0.98))
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    counters: dict[str, Any] = {"step": 0, "windows": 0, "rows": 0, "cpu": 0.0, "wall": 0.0, "best": None, "best_step": None,
                                "restart": None}
    if args.resume:
        state = run.load_state()
        model.adapter.load_state_dict(state["adapter"])
        optimizer.load_state_dict(state["optimizer"])
        counters.update(state["counters"])
        rng.setstate(state["rng"])
    elif args.resume_from:
        adapter, saved = load_compact(args.resume_from)
        model.adapter.load_state_dict(adapter)
        counters.update(saved["counters"])
        counters["restart"] = counters["step"]
        rng.setstate((saved["rng"][0], tuple(saved["rng"][1]), saved["rng"][2]))
    elif args.init_from:
        model.adapter.load_state_dict(RunFolder(args.init_from).load_best()["adapter"])
    elif args.init_adapter:
        model.adapter.load_state_dict({k: v.float() for k, v in load_file(str(args.init_adapter)).items()})
    if args.right_bias is not None and not (args.resume or args.resume_from):
        with torch.no_grad():
            model.adapter.right_bias.fill_(args.right_bias)
    shape = Shape(args.window, args.points, args.mask_blocks, args.block_masks)
    shares = parse_shares(args.languages, "--languages") if args.languages else None
    train_corpus = Corpus(args.corpus / "train.jsonl", tokenizer, shares)
    val_corpus = Corpus(args.corpus / "val.jsonl", tokenizer, shares)
    sampler = Sampler(train_corpus, special, shape, Headers(train_corpus, args.trees, tokenizer),
                      next_edit_examples.load("train", args.edits))
    autocast = precision.autocast(dtype, device)
    if args.bench:
        return bench(args, model, sampler, mix, special.eos, optimizer, params, rng, autocast, dtype)
    val_sampler = Sampler(val_corpus, special, shape, Headers(val_corpus, args.trees, tokenizer),
                          next_edit_examples.load("val", args.edits))
    val = EvalSet.build(val_sampler, args.eval_windows, tuple(mix))
    run.write_args({**vars(args), "dtype_used": dtype})
    if counters["step"] == 0 and not (args.resume or args.resume_from):
        counters["best"], counters["best_step"] = _validate(run, model, val, special.eos, counters, autocast)
    stop = Stop()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    cpu_start, wall_start = counters["cpu"], counters["wall"]
    recent: list[dict[str, float]] = []
    while counters["step"] < args.steps and time.process_time() - cpu0 < args.minutes * 60 and not stop.asked:
        factor = lr_factor(args, counters["step"], counters["restart"])
        for group, base in zip(optimizer.param_groups, (args.lr, args.bias_lr)):
            group["lr"] = base * factor
        optimizer.zero_grad(set_to_none=True)
        for _ in range(args.accumulate):
            stats = train_window(model, sampler, mix, special.eos, rng, autocast, args.accumulate)
            recent.append(stats)
            counters["rows"] += int(stats["rows"])
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        counters["step"] += 1
        counters["windows"] += args.accumulate
        counters["cpu"] = cpu_start + time.process_time() - cpu0
        counters["wall"] = wall_start + time.perf_counter() - wall0
        step = counters["step"]
        if step % 10 == 0:
            _log_train(run, model, counters, factor * args.lr, recent[-10 * args.accumulate :])
        if step % args.eval_every == 0:
            cpu_eval = time.process_time()
            score, _ = _validate(run, model, val, special.eos, counters, autocast)
            cpu0 += time.process_time() - cpu_eval  # evaluations do not use up the training budget
        if step % args.ckpt_every == 0:
            _checkpoint(run, model, optimizer, counters, rng)
    if not counters["step"] % args.eval_every == 0:
        _validate(run, model, val, special.eos, counters, autocast)
    _checkpoint(run, model, optimizer, counters, rng)


def train_window(model, sampler: Sampler, mix: dict[str, float], eos: int, rng: random.Random, autocast: Any,
                 accumulate: int) -> dict[str, float]:
    example = None
    while example is None:
        example = sampler.draw(rng, mix)
    with autocast:
        logits = packed_logits(model, example.ids, example.gaps, example.rows, eos)
        loss, stats = loss_of(logits, example.rows)
    (loss / accumulate).backward()
    return {**stats, "kind": example.kind}  # type: ignore[dict-item]


def bench(args: argparse.Namespace, model, sampler: Sampler, mix: dict[str, float], eos: int, optimizer, params,
          rng: random.Random, autocast: Any, dtype: str) -> None:
    """Train for --bench CPU seconds (the first window, which warms the kernels, not counted)."""
    train_window(model, sampler, mix, eos, rng, autocast, 1)
    optimizer.zero_grad(set_to_none=True)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    windows, rows = 0, 0.0
    kinds: dict[str, int] = {}
    while time.process_time() - cpu0 < args.bench:
        stats = train_window(model, sampler, mix, eos, rng, autocast, args.accumulate)
        windows += 1
        rows += stats["rows"]
        kinds[str(stats["kind"])] = kinds.get(str(stats["kind"]), 0) + 1
        if windows % args.accumulate == 0:
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    print(json.dumps({"dtype": dtype, "threads": args.threads, "windows": windows, "cpu_s": round(cpu, 1),
                      "wall_s": round(wall, 1), "windows_per_cpu_s": round(windows / cpu, 4),
                      "windows_per_s": round(windows / wall, 4), "target_rows_per_cpu_s": round(rows / cpu, 1),
                      "target_rows_per_s": round(rows / wall, 1), "rows_per_window": round(rows / max(windows, 1), 1),
                      "max_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2),
                      "kinds": kinds}))


def _log_train(run: RunFolder, model, counters: dict[str, Any], lr: float, recent: list[dict[str, Any]]) -> None:
    line: dict[str, Any] = {"kind": "train", "step": counters["step"], "windows": counters["windows"],
                            "cpu": round(counters["cpu"], 1), "wall": round(counters["wall"], 1), "lr": round(lr, 7),
                            "bias": round(float(model.adapter.right_bias.detach().mean()), 3)}
    for key in ("ce_committed", "ce_mask"):
        line[key] = round(float(np.mean([s[key] for s in recent])), 4)
    line["rows"] = int(counters["rows"])
    for kind in sorted({s["kind"] for s in recent}):
        line[f"{kind}/ce"] = round(float(np.mean([(s["ce_committed"] + s["ce_mask"]) / 2
                                                   for s in recent if s["kind"] == kind])), 4)
    run.log(**line)
    print(json.dumps(line), flush=True)


def _validate(run: RunFolder, model, val: EvalSet, eos: int, counters: dict[str, Any],
              autocast: Any) -> tuple[float, int | None]:
    with autocast:
        score = evaluate(model, val, eos)
    run.log(kind="val", step=counters["step"], windows=counters["windows"], cpu=round(counters["cpu"], 1), **score)
    print(json.dumps({"val": counters["step"], **score}), flush=True)
    if counters["best"] is None or score["score"] > counters["best"]:
        run.save_best(model, counters["step"], score)
        counters["best"], counters["best_step"] = score["score"], counters["step"]
    return counters["best"], counters["best_step"]


def _checkpoint(run: RunFolder, model, optimizer, counters: dict[str, Any], rng: random.Random) -> None:
    run.save_state(model, optimizer, counters, rng)
    rng_state = rng.getstate()
    run.save_compact(model, {"counters": counters, "rng": [rng_state[0], list(rng_state[1]), rng_state[2]],
                             "args": json.loads((run.path / "args.json").read_text())})


if __name__ == "__main__":
    main()
