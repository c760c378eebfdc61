"""Train the anchored adapter of the bundled default model on the corpus, on a wall-clock budget.

    python -m training.train_adapter --out runs/NAME --minutes 300 [--threads 1] [--resume]
    python -m training.train_adapter --out runs/NAME --bench 120        # examples/s and targets/s, nothing saved
    python -m training.train_adapter --out runs/NAME --export engine/default_model

The base stays frozen; the optimizer sees the adapter only (mask embedding, LoRA, right-context bias), and
the packed forward (packed.py) runs the clean text without gradients, so a step's cost scales with the gap
rows. Uses CUDA when present. The run folder holds state.pt (adapter, optimizer, step, elapsed, RNG; written
every --ckpt-minutes and at the end, for --resume), best.pt (the adapter with the best held-out score) and
log.jsonl.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch

from engine.models.anchored import AdapterShape, AnchoredModel
from training.evaluate import EvalSet, evaluate
from training.gaps import Corpus, choose_window, sample_gaps
from training.packed import build_rows, loss_of, packed_logits
from training.run_folder import BASE, RunFolder, build_model, export

CORPUS = Path(__file__).resolve().parents[1] / "corpus_cache" / "corpus"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--base", default=BASE, help="the base GGUF: package:file or a path")
    p.add_argument("--corpus", type=Path, default=CORPUS, help="folder with train.jsonl and val.jsonl")
    p.add_argument("--minutes", type=float, default=60.0, help="wall-clock budget of training (evals excluded)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--window", type=int, default=512, help="tokens of prefix context per example")
    p.add_argument("--points", type=int, default=6, help="gap ends per window (two or three gaps each)")
    p.add_argument("--mask-blocks", type=int, default=2)
    p.add_argument("--block-masks", type=int, default=7, help="masks per mask block: the lookahead trained")
    p.add_argument("--accumulate", type=int, default=2, help="windows per optimizer step")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--bias-lr", type=float, default=2e-2, help="learning rate of the right-context bias")
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--eval-minutes", type=float, default=20.0)
    p.add_argument("--eval-gaps", type=int, default=240)
    p.add_argument("--ckpt-minutes", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--init-from", type=Path, help="start from another run's best adapter (fresh optimizer)")
    p.add_argument("--right-bias", type=float, help="set the committed rows' right-context bias to this at the start")
    p.add_argument("--bench", type=float, help="train this many seconds, print throughput, save nothing")
    p.add_argument("--export", type=Path, help="write the best adapter into this model folder and exit")
    return p.parse_args(argv)


def lr_factor(args: argparse.Namespace, step: int, elapsed: float) -> float:
    """Linear warmup, then cosine to 10% over the wall-clock budget."""
    if step < args.warmup:
        return (step + 1) / args.warmup
    progress = min(elapsed / (args.minutes * 60), 1.0)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    run = RunFolder(args.out)
    if args.export:
        print(json.dumps(export(run, args.export, args.base)))
        return
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model, tokenizer, special = build_model(args.base, AdapterShape(rank=args.rank), device)
    params = [p for p in model.adapter.parameters()]
    bias = [model.adapter.right_bias]
    others = [p for p in params if p is not model.adapter.right_bias]
    optimizer = torch.optim.AdamW([{"params": others, "lr": args.lr}, {"params": bias, "lr": args.bias_lr}],
                                  weight_decay=0.0, betas=(0.9, 0.98))
    base_lrs = [args.lr, args.bias_lr]
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    step, elapsed, best = 0, 0.0, None
    if args.resume:
        state = run.load_state()
        model.adapter.load_state_dict(state["adapter"])
        optimizer.load_state_dict(state["optimizer"])
        step, elapsed, best = state["step"], state["elapsed"], state["best"]
        rng.setstate(state["rng"])
    elif args.init_from:
        model.adapter.load_state_dict(RunFolder(args.init_from).load_best()["adapter"])
    if args.right_bias is not None and not args.resume:
        with torch.no_grad():
            model.adapter.right_bias.fill_(args.right_bias)
    train = Corpus(args.corpus / "train.jsonl", tokenizer)
    val = EvalSet.build(Corpus(args.corpus / "val.jsonl", tokenizer), args.eval_gaps, args.window, special)
    if not args.bench:
        run.write_args(vars(args))
        if step == 0 and not args.resume:
            score = evaluate(model, val, special)
            run.log(kind="val", step=0, elapsed=0.0, **score)
            print(f"step 0 val {score}", flush=True)
    budget = args.bench if args.bench else args.minutes * 60
    last_ckpt = last_eval = elapsed
    totals = {"rows": 0.0, "targets": 0.0, "windows": 0}
    started = time.perf_counter() - elapsed
    window_stats: list[dict[str, float]] = []
    while elapsed < budget:
        factor = lr_factor(args, step, elapsed)
        for group, base in zip(optimizer.param_groups, base_lrs):
            group["lr"] = base * factor
        optimizer.zero_grad(set_to_none=True)
        for _ in range(args.accumulate):
            window = choose_window(train, rng, args.window)
            tf = train.file(window.file)
            ids = np.concatenate([[special.eos], tf.ids[window.start : window.start + window.length]])
            gaps = sample_gaps(train, window, rng, args.points)
            if not gaps:
                continue
            rows = build_rows(ids, gaps, special.mask, special.eos, args.mask_blocks, args.block_masks, rng)
            logits = packed_logits(model, ids, gaps, rows, special.eos)
            loss, stats = loss_of(logits, rows)
            (loss / args.accumulate).backward()
            window_stats.append(stats)
            totals["rows"] += stats["rows"]
            totals["targets"] += stats["rows"]
            totals["windows"] += 1
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        step += 1
        elapsed = time.perf_counter() - started
        if step % 10 == 0:
            recent = window_stats[-10 * args.accumulate :]
            line = {k: round(float(np.mean([s[k] for s in recent])), 4) for k in ("ce_committed", "ce_mask")}
            bias_mean = float(model.adapter.right_bias.detach().mean())
            run.log(kind="train", step=step, elapsed=round(elapsed, 1), lr=round(factor * args.lr, 6),
                    bias=round(bias_mean, 3), **line) if not args.bench else None
            print(f"step {step} {elapsed:.0f}s {line} bias {bias_mean:.2f} rows/s {totals['rows'] / elapsed:.1f}",
                  flush=True)
        if args.bench:
            continue
        if elapsed - last_ckpt >= args.ckpt_minutes * 60:
            run.save_state(model, optimizer, step, elapsed, best, rng)
            last_ckpt = elapsed
        if elapsed - last_eval >= args.eval_minutes * 60:
            paused = time.perf_counter()
            best = _validate(run, model, val, special, step, elapsed, best)
            started += time.perf_counter() - paused
            last_eval = elapsed
    if args.bench:
        print(json.dumps({"seconds": round(elapsed, 1), "windows": totals["windows"],
                          "rows_per_s": round(totals["rows"] / elapsed, 1),
                          "windows_per_s": round(totals["windows"] / elapsed, 3)}))
        return
    best = _validate(run, model, val, special, step, elapsed, best)
    run.save_state(model, optimizer, step, elapsed, best, rng)


def _validate(run: RunFolder, model: AnchoredModel, val: EvalSet, special, step: int, elapsed: float,
              best: float | None) -> float | None:
    score = evaluate(model, val, special)
    run.log(kind="val", step=step, elapsed=round(elapsed, 1), **score)
    print(f"step {step} val {score}", flush=True)
    if best is None or score["score"] > best:
        run.save_best(model, step, score)
        return score["score"]
    return best


if __name__ == "__main__":
    main()
