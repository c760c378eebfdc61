"""Speed: the naive loop vs dcomplete's fast mode vs autoregressive decoding.

    python -m bench.speed [--model default] [--device cpu|cuda] [--dtype D] [--cases 8] [--repeat 1]
                          [--threshold 0.9] [--block 0] [--near 1] [--eos-penalty 0]
                          [--shape bundled|open-dcoder-0.5b] [--vs-float32 | --compiled]

Per span size (one line, 16, 32 and 64 tokens), on the same canvases (regenerated lines of real files the
corpus never saw), one request at a time:
  naive  one token per step: for full-attention families with no cache, the whole canvas every step,
         Dream's schedule with steps = masks, as the official samplers ship; for block-diffusion families
         their reference rule with no cache (every block up to the current one every step, as LLaDA2's
         `generate` runs); for the anchored family with its exact cache (the same output as fast, which
         verifies its drafts);
  fast   the default sampler: threshold 0.9 (--threshold) plus the cache (for block families, complete
         blocks cached exactly);
  ar     for the anchored family, its base decoding greedily from the prefix alone with the same exact KV
         cache (the adapter off); for the other families, transformers Qwen2ForCausalLM (Qwen3 for SDAR's
         shape) with random weights of the same shape, `generate` with its KV cache, as many new tokens
         as the span.
Tokens/s counts the tokens each mode wrote that are not end-of-text (anchored spans end when the model
says so; full-attention modes fill every position); for the anchored family each timed request follows
one on the same canvas and document, so it reuses the exact cache of the fixed text and times writing
only (a cold prefill of the 2048-token context costs seconds on a CPU, in every mode alike: bench.cache). Agreement is the fraction of positions where fast and
naive chose the same token. `tok/fwd` is fast's written tokens per forward. `x AR req` compares the
time each mode took for the same requests (ar's seconds over fast's): the anchored default ends a span
where the text after it takes over, so it often writes fewer tokens than its base alone, and a request
is done sooner even where its tokens/s is lower.

Which cases a row draws moves its ratios more than the machine does (six cases a size gave fast 1.12-1.19x
`ar`, eight 1.24-1.43x, sixteen 1.18-1.32x, within 40 minutes), so the `all` line pools every case of every size
and gives, beside its ratio, the range that 90% of bootstrap resamples of those cases fall in: a target is
met when that range clears it, not when one draw does. `--repeat N` times each request N times, the modes
taking turns, and keeps each one's median, for a machine that drifts. The last line is JSON.
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from bench.workload import Case, cases, package_versions
from engine import DenoiseParams, Engine, InfillRequest
from engine.loading.compiled import compiled_products

SIZES: tuple[tuple[str, int | None, int | None], ...] = (
    ("line", None, 1), ("16", 16, None), ("32", 32, None), ("64", 64, None),
)
OPEN_DCODER = dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                   num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=4096)
# Random block-diffusion models shaped like the released checkpoints (Qwen3-1.7B and Qwen2.5-1.5B bases;
# research/models.md §2.8, §2.9): config.json as the family's loader reads it.
BLOCK_SHAPES: dict[str, dict[str, Any]] = {
    "sdar-1.7b": {"model_type": "sdar", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
                  "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
                  "rope_theta": 1e6, "max_position_embeddings": 32768, "tie_word_embeddings": False,
                  "block_size": 4},
    "fast-dllm-v2-1.5b": {"model_type": "Fast_dLLM_Qwen", "vocab_size": 151936, "hidden_size": 1536,
                          "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
                          "num_key_value_heads": 2, "rope_theta": 1e6, "max_position_embeddings": 32768,
                          "tie_word_embeddings": True, "bd_size": 32},
}
SHAPES = ("bundled", "open-dcoder-0.5b", *BLOCK_SHAPES)


def timed(fn, device: str) -> tuple[Any, float]:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    started = time.perf_counter()
    out = fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return out, time.perf_counter() - started


def ar_model(engine: Engine) -> torch.nn.Module:
    """transformers' autoregressive model of the engine's shape (Qwen3 for a QK-norm shape), random."""
    from transformers import Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

    s = engine.loaded.model.shape
    common: dict[str, Any] = {
        "vocab_size": s.vocab_size, "hidden_size": s.hidden_size, "intermediate_size": s.intermediate_size,
        "num_hidden_layers": s.num_hidden_layers, "num_attention_heads": s.num_attention_heads,
        "num_key_value_heads": s.num_key_value_heads, "max_position_embeddings": 8192,
        "tie_word_embeddings": s.tie_word_embeddings, "attn_implementation": "sdpa"}
    torch.manual_seed(0)
    if s.qk_norm:
        model = Qwen3ForCausalLM(Qwen3Config(**common, head_dim=s.head_dim or s.hidden_size // s.num_attention_heads))
    else:
        model = Qwen2ForCausalLM(Qwen2Config(**common))
    return model.to(engine.loaded.device, engine.loaded.dtype).eval()


def run_diffusion(engine: Engine, case: Case, params: DenoiseParams) -> tuple[list[int], int, float, int]:
    """One timed request. A left-to-right engine first sees the same canvas once under a document id, so
    the timed request reuses its exact cache of the fixed text and times the writing, not the prefill."""
    doc = None
    if engine.left_to_right and params.cache == "fixed":
        doc = "bench.speed"
        engine.infill([InfillRequest(case.canvas, doc_id=doc)], params)
    (result,), seconds = timed(lambda: engine.infill([InfillRequest(case.canvas, doc_id=doc)], params), engine.device)
    if doc is not None:
        engine.forget(doc)
    return result.spans[0].token_ids, result.stats.forward_passes, seconds, result.stats.new_tokens


def run_ar(model: torch.nn.Module | None, engine: Engine, case: Case) -> tuple[float, int]:
    """(seconds, tokens written) of autoregressive decoding of the case's span."""
    if model is None:  # the anchored family: its own base, adapter off
        _, _, seconds, written = run_diffusion(engine, case, DenoiseParams(adapter=False))
        return seconds, written
    mask = engine.special.mask_id
    prompt = torch.tensor([[t for t in case.canvas if t != mask]], device=engine.loaded.device)
    n = len(case.truth)

    def go():
        with torch.inference_mode():
            return model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=n,
                                  min_new_tokens=n, do_sample=False, use_cache=True, eos_token_id=None,
                                  pad_token_id=engine.special.pad_id)

    return timed(go, engine.device)[1], n


def measure(engine: Engine, ar: torch.nn.Module | None, sample: list[Case], fast_p: DenoiseParams,
            exact: Engine | None = None, versus: str = "float32", repeat: int = 1,
            timings: list[Timing] | None = None) -> dict[str, float]:
    """One row's figures; each case's `Timing` is appended to `timings`."""
    naive_p = DenoiseParams.reference().with_(eos_penalty=fast_p.eos_penalty)
    if uses_own_base(engine):  # its cache is exact: the slow loop is one token a step, cached
        naive_p = naive_p.with_(cache="fixed")
    run_diffusion(engine, sample[0], naive_p)  # warm-up of every path
    run_diffusion(engine, sample[0], fast_p)
    run_ar(ar, engine, sample[0])
    tokens = sum(len(c.truth) for c in sample)
    t = {"naive": 0.0, "fast": 0.0, "ar": 0.0}
    written = {"naive": 0, "fast": 0, "ar": 0}
    forwards = {"naive": 0, "fast": 0}
    agree = 0
    fast_outputs = []
    for case in sample:
        times: dict[str, list[float]] = {"naive": [], "fast": [], "ar": []}
        for _ in range(repeat):  # the modes take turns, so a drifting machine slows each alike
            naive_ids, naive_f, naive_s, naive_w = run_diffusion(engine, case, naive_p)
            fast_ids, fast_f, fast_s, fast_w = run_diffusion(engine, case, fast_p)
            ar_s, ar_w = run_ar(ar, engine, case)
            for mode, seconds in (("naive", naive_s), ("fast", fast_s), ("ar", ar_s)):
                times[mode].append(seconds)
        naive_s, fast_s, ar_s = (statistics.median(times[mode]) for mode in ("naive", "fast", "ar"))
        if timings is not None:
            timings.append(Timing(fast_s, fast_w, ar_s, ar_w))
        for mode, seconds, count in (("naive", naive_s, naive_w), ("fast", fast_s, fast_w), ("ar", ar_s, ar_w)):
            t[mode] += seconds
            written[mode] += count
        forwards["naive"] += naive_f
        forwards["fast"] += fast_f
        agree += sum(a == b for a, b in zip(naive_ids, fast_ids))
        fast_outputs.append(fast_ids)
    rate = {mode: written[mode] / t[mode] for mode in t}
    extra = {} if exact is None else {f"{versus}_agreement": float32_agreement(exact, sample, fast_outputs, fast_p)}
    return {
        **extra,
        "cases": len(sample),
        "mean_span": tokens / len(sample),
        "naive_tok_s": rate["naive"],
        "fast_tok_s": rate["fast"],
        "ar_tok_s": rate["ar"],
        "speedup_vs_naive": rate["fast"] / rate["naive"],
        "speedup_vs_ar": rate["fast"] / rate["ar"],
        "request_speedup_vs_ar": t["ar"] / t["fast"],
        "tokens_per_forward": written["fast"] / forwards["fast"],
        "naive_tokens_per_forward": written["naive"] / forwards["naive"],
        "agreement": agree / max(1, sum(len(c.truth) for c in sample)),
        "fast_written": written["fast"],
    }


@dataclass(frozen=True)
class Timing:
    """One case: fast's and ar's seconds and the tokens each wrote."""

    fast_s: float
    fast_written: int
    ar_s: float
    ar_written: int


def pooled_ratio(timings: list[Timing]) -> float:
    """fast's tokens/s over ar's, over every case together (each mode's tokens over its seconds)."""
    fast = sum(t.fast_written for t in timings) / sum(t.fast_s for t in timings)
    ar = sum(t.ar_written for t in timings) / sum(t.ar_s for t in timings)
    return fast / ar if ar else float("nan")


def ratio_interval(timings: list[Timing], resamples: int = 2000, share: float = 0.9,
                   seed: int = 0) -> tuple[float, float]:
    """The range holding the middle `share` of `pooled_ratio` over resamples of the cases (drawn with
    replacement, as many as there are): how far the ratio could move with another draw of cases."""
    rng = random.Random(seed)
    ratios = sorted(pooled_ratio(rng.choices(timings, k=len(timings))) for _ in range(resamples))
    tail = (1 - share) / 2
    return ratios[int(tail * (resamples - 1))], ratios[int((1 - tail) * (resamples - 1))]


def float32_agreement(exact: Engine, sample: list[Case], outputs: list[list[int]], params: DenoiseParams) -> float:
    """The share of tokens before the first difference between `outputs` (one per case) and the same
    model's with every product in float32 (`exact`), up to the shorter span of each case: where a float16
    or 4-bit product flips a near-tie, the texts part there and what follows is another text."""
    same = total = 0
    for case, ours in zip(sample, outputs):
        theirs, _, _, _ = run_diffusion(exact, case, params)
        total += min(len(ours), len(theirs))
        same += sum(1 for _ in itertools.takewhile(lambda pair: pair[0] == pair[1], zip(ours, theirs)))
    return same / max(1, total)


def uses_own_base(engine: Engine) -> bool:
    """The anchored family: its AR baseline and one-token-a-step loop are its own base, with its exact cache."""
    return engine.left_to_right and engine.loaded.family.block is None


def block_shape_engine(shape: str, device: str, dtype: str | None) -> Engine:
    """A random model of a `BLOCK_SHAPES` shape, built in memory (no multi-GB checkpoint on disk), with the
    tiny test tokenizer (every id it writes fits the vocabulary)."""
    from engine.denoise.seam import LoadedModel
    from engine.families.registry import family_of
    from engine.loading.devices import pick_device, pick_dtype
    from engine.loading.tokenizer import special_tokens
    from tests.support.checkpoints import tiny_tokenizer

    cfg = BLOCK_SHAPES[shape]
    family = family_of(cfg)
    dev = pick_device(device)
    dt = pick_dtype(dtype, dev)
    torch.manual_seed(0)
    with torch.device(dev):
        model = family.model_class(family.shape(cfg)).to(dt).eval()
    model.fuse_for_inference()
    tokenizer = tiny_tokenizer()
    special = special_tokens(cfg, tokenizer, Path(shape))
    loaded = LoadedModel(Path(shape), family, model, tokenizer, special, 4096, dev, dt)
    return Engine(loaded)


def load_engine(args: argparse.Namespace) -> Engine:
    if args.shape == "bundled":
        engine = Engine.load(args.model, device=args.device, dtype=args.dtype,
                             compiled="int8" if args.compiled else None)
        # this machine's kernels (and with --compiled the compiled products), measured or built, or read from
        # the cache, and swapped in before anything runs, as a server has them after its first start
        while engine.calibrate_step():
            pass
        if args.compiled and not all(p.compiled is not None for p in compiled_products(engine.loaded.model)):
            raise SystemExit("--compiled: the compiled products could not be built here (the log says why)")
        return engine
    if args.shape in BLOCK_SHAPES:
        return block_shape_engine(args.shape, args.device, args.dtype)
    from tests.support.checkpoints import make_tiny_checkpoint

    folder = make_tiny_checkpoint(tempfile.mkdtemp(prefix="dcomplete-shape-"), **OPEN_DCODER)
    return Engine.load(folder, device=args.device)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default=None, help="float32, bfloat16, int8 (CPU: int8 linear weights)")
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1,
                        help="time each request this many times, the modes taking turns, and keep the medians")
    parser.add_argument("--threshold", type=float, default=0.9, help="fast mode's confidence threshold")
    parser.add_argument("--block", type=int, default=0, help="fast mode's semi-autoregressive block (0: off)")
    parser.add_argument("--near", type=int, default=DenoiseParams.near,
                        help="fast mode: fixed text this close to a span reruns every step")
    parser.add_argument("--eos-penalty", type=float, default=0.0,
                        help="subtracted from end-of-text logits in both diffusion loops (a model that leaves gaps "
                             "empty then writes tokens to be timed)")
    parser.add_argument("--context", type=int, default=None, help="canvas token budget (default: the model's)")
    parser.add_argument("--shape", choices=SHAPES, default="bundled",
                        help="a random model of that shape (absolute speed only): open-dcoder-0.5b, or the "
                             "block-diffusion sdar-1.7b / fast-dllm-v2-1.5b")
    parser.add_argument("--vs-float32", action="store_true",
                        help="also load the model with every product in float32 and report how much of the "
                             "default's output equals it (the kernels calibration picks may round differently)")
    parser.add_argument("--compiled", action="store_true",
                        help="run the engine on its compiled int8 products (engine.loading.compiled) and report how "
                             "much of its output equals the same engine's on its eager kernels")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        raise SystemExit(f"--repeat {args.repeat}: must be at least 1")
    torch.manual_seed(0)
    engine = load_engine(args)
    versus = "float32" if args.vs_float32 else "eager"
    exact = (Engine.load(args.model, device=args.device, dtype="float32") if args.vs_float32
             else Engine.load(args.model, device=args.device, compiled="off") if args.compiled else None)
    ar = None if uses_own_base(engine) else ar_model(engine)
    rows: dict[str, dict[str, float]] = {}
    timings: list[Timing] = []
    for label, span, lines in SIZES:
        sample = cases(engine, span or 0, args.cases, args.context, lines)
        fast = DenoiseParams.fast(args.threshold).with_(block=args.block, near=args.near, eos_penalty=args.eos_penalty)
        rows[label] = measure(engine, ar, sample, fast, exact, versus, args.repeat, timings)
    pooled, (low, high) = pooled_ratio(timings), ratio_interval(timings)
    head = f"{'span':>5} {'n':>3} {'tokens':>6} {'naive tok/s':>11} {'fast tok/s':>10} {'AR tok/s':>9} " \
           f"{'x naive':>7} {'x AR':>5} {'x AR req':>8} {'tok/fwd':>7} {'agree':>6}"
    print(f"model {engine.name} ({engine.family}, {engine.device}, {sum(p.numel() for p in engine.loaded.model.parameters()) / 1e6:.1f}M params); "
          f"{platform.processor() or platform.machine()}, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(head)
    for label, r in rows.items():
        print(f"{label:>5} {r['cases']:>3} {r['mean_span']:>6.1f} {r['naive_tok_s']:>11.1f} {r['fast_tok_s']:>10.1f} "
              f"{r['ar_tok_s']:>9.1f} {r['speedup_vs_naive']:>7.2f} {r['speedup_vs_ar']:>5.2f} "
              f"{r['request_speedup_vs_ar']:>8.2f} "
              f"{r['tokens_per_forward']:>7.2f} {r['agreement']:>6.3f}"
              + (f"  {versus} {r[f'{versus}_agreement']:.3f}" if f"{versus}_agreement" in r else ""))
    print(f"  all {len(timings):>3}  fast vs AR {pooled:.2f}x tokens/s; 90% of resamples of these cases: "
          f"{low:.2f}-{high:.2f}x")
    headline = rows["32"]
    summary = {
        "benchmark": "speed", "model": engine.name, "device": engine.device, "shape": args.shape,
        "dtype": args.dtype, "threads": torch.get_num_threads(), "compiled": args.compiled,
        "threshold": args.threshold, "block": args.block, "near": args.near, "eos_penalty": args.eos_penalty,
        "speedup_vs_naive": round(headline["speedup_vs_naive"], 3),
        "speedup_vs_ar": round(headline["speedup_vs_ar"], 3),
        "request_speedup_vs_ar": round(headline["request_speedup_vs_ar"], 3),
        "tokens_per_forward": round(headline["tokens_per_forward"], 3),
        "speedup_vs_ar_all": round(pooled, 3), "speedup_vs_ar_interval": [round(low, 3), round(high, 3)],
        "repeat": args.repeat,
        "agreement": round(sum(r["agreement"] * r["mean_span"] * r["cases"] for r in rows.values())
                           / sum(r["mean_span"] * r["cases"] for r in rows.values()), 4),
        "sources": package_versions(),
        "rows": {k: {m: round(v, 4) for m, v in r.items()} for k, r in rows.items()},
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
