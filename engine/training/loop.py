"""The training loop behind `python -m engine.training.train` (argument parsing and presets live there)."""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import replace

import torch

from engine.models.dream import DreamConfig, DreamModel
from engine.training import runstate
from engine.training.data import SpecialIds, TokenizedCorpus
from engine.training.objective import add_noise, diffusion_loss
from engine.training.tokenizer import load_tokenizer
from engine.training.train import (
    PRESETS,
    Prefetcher,
    autocast,
    build_model,
    evaluate,
    learning_rate,
    make_optimizer,
    validation_batches,
)


def _shape(args: argparse.Namespace):
    shape = PRESETS[args.preset]
    overrides = {k: getattr(args, k) for k in ("hidden", "layers", "heads", "kv_heads", "ffn")}
    return replace(shape, **{k: v for k, v in overrides.items() if v is not None})


def _progress(args: argparse.Namespace, step: int, elapsed: float) -> float:
    if args.bench is not None:
        return 0.0
    if args.minutes is not None:
        return elapsed / (args.minutes * 60)
    return step / args.steps


def train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    tokenizer = load_tokenizer(args.tokenizer)
    special = SpecialIds(tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.mask_token_id)
    run = args.out
    run.mkdir(parents=True, exist_ok=True)
    data_rng = random.Random(args.seed)
    torch.manual_seed(args.seed)

    step, elapsed, best_val = 0, 0.0, None
    if args.resume:
        saved = runstate.load_state(run)
        model = DreamModel(DreamConfig.from_hf(saved["config"]))
        model.load_state_dict(saved["model"])
        model.to(device)
        optimizer = make_optimizer(model, args.lr, args.weight_decay)
        optimizer.load_state_dict(saved["optimizer"])
        step, elapsed, best_val = saved["step"], saved["elapsed"], saved["best_val"]
        runstate.restore_rng(saved["rng"], data_rng)
    elif args.init_from is not None:
        start = runstate.load_best(args.init_from)
        model = DreamModel(DreamConfig.from_hf(start["config"]))
        model.load_state_dict(start["model"])
        model.to(device)
        optimizer = make_optimizer(model, args.lr, args.weight_decay)
    else:
        model = build_model(_shape(args), len(tokenizer), args.seq_len, special).to(device)
        optimizer = make_optimizer(model, args.lr, args.weight_decay)

    params = sum(p.numel() for p in model.parameters())
    train_corpus = TokenizedCorpus.from_jsonl(args.corpus / "train.jsonl", tokenizer, special)
    val_corpus = TokenizedCorpus.from_jsonl(args.corpus / "val.jsonl", tokenizer, special)
    val = validation_batches(val_corpus, args) if args.bench is None else []
    batches = Prefetcher(train_corpus, data_rng, args)
    print(
        f"model {params / 1e6:.2f}M params {model.config.to_hf()}; device {device}; "
        f"train tokens {len(train_corpus.stream)}; resume step {step}",
        flush=True,
    )
    runstate.log_event(
        run, event="start", step=step, params=params, config=model.config.to_hf(), args=_jsonable(args)
    )

    tokens_per_step = args.batch_size * args.seq_len
    window_loss, window_ce, window_n = 0.0, 0.0, 0
    last_ckpt = start = time.time()
    segment_start_elapsed, first_step = elapsed, step
    model.train()
    while True:
        elapsed = segment_start_elapsed + (time.time() - start)
        progress = _progress(args, step, elapsed)
        if progress >= 1.0 or (args.bench is not None and time.time() - start >= args.bench):
            break
        lr = learning_rate(args, step, progress)
        for group in optimizer.param_groups:
            group["lr"] = lr
        ids, maskable = batches.next()
        ids, maskable = ids.to(device), maskable.to(device)
        noised = add_noise(ids, maskable, special.mask)
        with autocast(device):
            loss, ce = diffusion_loss(model, ids, maskable, noised)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        window_loss, window_ce, window_n = window_loss + loss.item(), window_ce + ce.item(), window_n + 1

        if step % args.log_every == 0:
            rate = tokens_per_step * (step - first_step) / max(1e-9, time.time() - start)
            record = {
                "event": "train",
                "step": step,
                "loss": window_loss / window_n,
                "ce": window_ce / window_n,
                "lr": lr,
                "tokens": step * tokens_per_step,
                "elapsed": round(elapsed, 1),
                "tokens_per_s": round(rate, 1),
            }
            print(record, flush=True)
            if args.bench is None:
                runstate.log_event(run, **record)
            window_loss, window_ce, window_n = 0.0, 0.0, 0
        if args.bench is None and step % args.eval_every == 0:
            best_val = _validate(run, model, val, device, step, elapsed, best_val)
        if args.bench is None and time.time() - last_ckpt > args.ckpt_minutes * 60:
            runstate.save_state(run, model, optimizer, step, elapsed, best_val, data_rng, _jsonable(args))
            runstate.log_event(run, event="checkpoint", step=step)
            last_ckpt = time.time()

    seconds = time.time() - start
    if args.bench is not None:
        rate = tokens_per_step * step / seconds
        print(f"BENCH {params / 1e6:.2f}M params: {step} steps, {rate:.0f} tokens/s", flush=True)
        return
    best_val = _validate(run, model, val, device, step, elapsed, best_val)
    runstate.save_state(run, model, optimizer, step, elapsed, best_val, data_rng, _jsonable(args))
    runstate.log_event(
        run,
        event="done",
        step=step,
        tokens=step * tokens_per_step,
        elapsed=round(elapsed, 1),
        best_val=best_val,
    )
    print(f"done: {step} steps, {step * tokens_per_step} tokens, best val {best_val}", flush=True)


def _validate(run, model, val, device, step: int, elapsed: float, best_val: float | None) -> float | None:
    metrics = evaluate(model, val, device)
    improved = best_val is None or metrics["val_loss"] < best_val
    if improved:
        best_val = metrics["val_loss"]
        runstate.save_best(run, model, step, best_val)
    record = dict(event="val", step=step, elapsed=round(elapsed, 1), best=improved, **metrics)
    print(record, flush=True)
    runstate.log_event(run, **record)
    return best_val


def _jsonable(args: argparse.Namespace) -> dict[str, object]:
    return {
        k: (str(v) if not isinstance(v, (int, float, str, bool, type(None))) else v)
        for k, v in vars(args).items()
    }
