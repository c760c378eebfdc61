"""What building the compiled int8 products in the background costs the engine that serves meanwhile, and how
long until they serve.

    python -m bench.compiled_background [--products 24] [--context 256] [--rows 1]

On the bundled model, one thread (OMP_NUM_THREADS=1; the build runs at the engine's thread count):
  disturbance  the decoding step's median ms (bench.step's step) while nothing else runs, while a thread of
               this process compiles the first `--products` products (`engine.kernels.compiled_int8`, a new
               inductor cache), and while a subprocess at the lowest priority compiles the same ones
               (`engine.loading.compile_build`, as the engine runs it), the step timed back to back for as
               long as the compile runs; the ratio to the quiet step;
  ready        (this machine's calibration and prepared weights kept: run bench.step once before) seconds from `Engine.load(compiled="int8")` until every product is swapped in, with idle pieces
               run back to back (`Engine.calibrate_step`): cold (a new cache folder: the subprocess compiles
               all), then warm (a second process on the same cache: only the loads), with the longest piece.
The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import torch

from bench.step import OurStep, context_ids
from engine import Engine
from engine.kernels.compiled_int8 import Int8Weight, compile_product, inductor_settings
from engine.loading.compiled import decoding_weight, write_weights


def steps_while(step: OurStep, rows: int, busy: Any) -> tuple[float, int]:
    """Median ms of `step` timed back to back while `busy()` says the background work runs."""
    times = []
    while busy() or len(times) < 3:
        started = time.perf_counter()
        step.predict(rows)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), len(times)


def disturbance(engine: Engine, step: OurStep, rows: int, count: int) -> dict[str, Any]:
    weights = [Int8Weight.of(decoding_weight(p)) for p in engine.loaded.model.products()[:count]]
    quiet = statistics.median([steps_while(step, rows, lambda: False)[0] for _ in range(5)])
    out: dict[str, Any] = {"quiet_ms": quiet}

    def in_thread() -> None:
        with inductor_settings(Path(tempfile.mkdtemp(prefix="inductor-thread-"))):
            for w in weights:
                compile_product(w)

    started = time.perf_counter()
    worker = threading.Thread(target=in_thread)
    worker.start()
    out["thread_ms"], out["thread_steps"] = steps_while(step, rows, worker.is_alive)
    worker.join()
    out["thread_compile_s"] = time.perf_counter() - started

    folder = Path(tempfile.mkdtemp(prefix="compiled-sub-"))
    write_weights(folder, weights)
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "engine.loading.compile_build", str(folder)],
                               stdout=subprocess.DEVNULL, env={**os.environ,
                                                               "DCOMPLETE_COMPILED_THREADS": str(torch.get_num_threads())})
    out["subprocess_ms"], out["subprocess_steps"] = steps_while(step, rows, lambda: process.poll() is None)
    out["subprocess_compile_s"] = time.perf_counter() - started
    out["subprocess_exit"] = process.returncode
    return out


def ready(model: str) -> dict[str, Any]:
    """Seconds from the load until the compiled products serve, and the longest idle piece."""
    started = time.perf_counter()
    engine = Engine.load(model, device="cpu", compiled="int8")
    loaded = time.perf_counter() - started
    longest, pieces = 0.0, 0
    while True:
        t = time.perf_counter()
        more = engine.calibrate_step()
        longest, pieces = max(longest, time.perf_counter() - t), pieces + 1
        if not more:
            break
    swapped = sum(p.compiled is not None for p in engine.loaded.model.products())
    return {"load_s": loaded, "ready_s": time.perf_counter() - started, "longest_piece_s": longest,
            "pieces": pieces, "swapped": swapped, "products": len(engine.loaded.model.products())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compiled_background", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--products", type=int, default=24, help="products compiled for the disturbance")
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--ready-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ready_only:  # the warm second process
        print(json.dumps(ready(args.model)))
        return 0
    from engine.loading.gguf_base import cache_root

    engine = Engine.load(args.model, device="cpu")
    step = OurStep(engine, *context_ids(engine, args.context), adapter=True)
    disturbed = disturbance(engine, step, args.rows, args.products)
    del step, engine
    shutil.rmtree(cache_root() / "compiled", ignore_errors=True)  # cold: this machine's calibration stays
    cold = ready(args.model)
    warm = json.loads(subprocess.run([sys.executable, "-m", "bench.compiled_background", "--ready-only",
                                      "--model", args.model], check=True, capture_output=True,
                                     text=True).stdout.strip().splitlines()[-1])
    print(f"model {args.model}; {platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}; step of {args.rows} row(s) after {args.context} tokens")
    q = disturbed["quiet_ms"]
    print(f"step ms quiet {q:.1f}; while a thread compiles {args.products} "
          f"products {disturbed['thread_ms']:.1f} ({disturbed['thread_ms'] / q:.2f}x, compile "
          f"{disturbed['thread_compile_s']:.0f} s); while a subprocess does {disturbed['subprocess_ms']:.1f} "
          f"({disturbed['subprocess_ms'] / q:.2f}x, compile {disturbed['subprocess_compile_s']:.0f} s)")
    for name, r in (("cold", cold), ("warm", warm)):
        print(f"ready {name}: {r['ready_s']:.1f} s after the load began ({r['swapped']}/{r['products']} swapped in, "
              f"load {r['load_s']:.1f} s, longest idle piece {r['longest_piece_s']:.2f} s of {r['pieces']})")
    print(json.dumps({"benchmark": "compiled_background", "threads": torch.get_num_threads(),
                      "context": args.context, "rows": args.rows, "products": args.products,
                      "disturbance": disturbed, "ready_cold": cold, "ready_warm": warm}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
