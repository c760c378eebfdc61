"""One decoding step of the bundled model with its products compiled (inductor's int8 weight-only AMX kernel)
against the engine's own, end to end (the products compiled in this process, not in the background).

    python -m bench.compiled_step [--context 1024] [--rows 1,16] [--rounds 9] [--threads 2] [--layers 30]

The engine loads as usual; then every fused product of a decoding step (q/k/v, o, gate/up, down with the
adapter's update added into the weight, and the head) is quantized to int8 per output row and compiled by
the engine's `compiled` kernel (`engine.kernels.compiled_int8`: for any row count, the AMX micro-kernel at
every row count, which keeps a row's bits whatever rows run beside it), here in this process, and set as
each product's `compiled`, which runs it for decoding calls of 1-16 rows (every row a gap row and the adapter
on: the calls today's merged bfloat16 copy serves) and the engine's own product otherwise.

Reported, the two taking turns in each round: the step's median ms after `--context` tokens at each row
count (bench.step's step: the last written token and the masks after it), the ratio, and how often the
compiled step's greedy token at a row equals the engine's. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from bench.step import OurStep, context_ids
from engine.kernels.compiled_int8 import Int8Weight, compile_product, inductor_settings
from engine.kernels.projections import FusedProjections
from engine.loading.compiled import decoding_weight


def compile_all(products: list[FusedProjections], cache: Path) -> tuple[list[Callable[..., Any]], float]:
    """Every product's compiled form (the engine's `compiled` kernel), compiled here, and the seconds."""
    started, found = time.perf_counter(), []
    with inductor_settings(cache):
        for p in products:
            found.append(compile_product(Int8Weight.of(decoding_weight(p))))
    return found, time.perf_counter() - started


def use(products: list[FusedProjections], compiled: list[Callable[..., Any]] | None) -> None:
    """Run the products' decoding calls on `compiled` (None: on the engine's eager kernels)."""
    for i, p in enumerate(products):
        p.compiled = compiled[i] if compiled is not None else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compiled_step", description=__doc__.split("\n\n")[0])
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--rows", default="1,16")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=30, help="blocks whose products are compiled")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    cache = Path(os.environ.get("TORCHINDUCTOR_CACHE_DIR") or tempfile.mkdtemp(prefix="inductor-"))

    from engine import Engine

    engine = Engine.load("default", device="cpu")
    model = engine.loaded.model
    products = model.products()[: 4 * args.layers] + [model.products()[-1]]
    swapped, compile_s = compile_all(products, cache)
    prefix, written, suffix = context_ids(engine, args.context)
    step = OurStep(engine, prefix, written, suffix, adapter=True)
    results: dict[str, dict[str, float]] = {}
    for rows in (int(r) for r in args.rows.split(",")):
        times: dict[bool, list[float]] = {False: [], True: []}
        tokens: dict[bool, torch.Tensor] = {}
        for compiled in (False, True):
            use(products, swapped if compiled else None)
            tokens[compiled] = step.predict(rows).argmax(-1)
        for _ in range(args.rounds):
            for compiled in (False, True):
                use(products, swapped if compiled else None)
                started = time.perf_counter()
                step.predict(rows)
                times[compiled].append((time.perf_counter() - started) * 1000)
        use(products, None)
        eager, fast = statistics.median(times[False]), statistics.median(times[True])
        same = (tokens[False] == tokens[True]).float().mean().item()
        results[str(rows)] = {"engine_ms": eager, "compiled_ms": fast, "ratio": fast / eager, "same_token": same}
    print(f"model {engine.name}; {platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"threads {args.threads}; context {args.context}; {len(swapped)} products compiled in {compile_s:.0f} s")
    print(f"{'rows':>5} {'engine ms':>10} {'compiled ms':>12} {'ratio':>6} {'same token':>10}")
    for rows, r in results.items():
        print(f"{rows:>5} {r['engine_ms']:>10.2f} {r['compiled_ms']:>12.2f} {r['ratio']:>6.2f} {r['same_token']:>10.3f}")
    print(json.dumps({"benchmark": "compiled_step", "threads": args.threads, "context": args.context,
                      "compile_s": round(compile_s, 1), "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
