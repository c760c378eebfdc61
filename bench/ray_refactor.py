"""Batch refactoring on Ray: files/s with 1 and 2 actors, against one engine in this process.

    python -m bench.ray_refactor [--model default] [--files 8] [--batch 2] [--actors 1,2] [--cpus 2]

The files are a fixed set made from a seed (each a small module with one `# <|hole:N|>` in a function
body), filled as `dcomplete refactor --holes --batch B` would: the same jobs and batches go to the local
backend (one torch thread, as each actor has) and to a pool of N actors (`remote.ray_refactor.RayFill`,
each holding one CPU and its own engine). "fill s" is the wall time of filling every file after one
warm-up batch per engine; "start s" the time to start the actors (or load the engine) before it; neither
the warm-up nor the start counts in files/s. Without a cluster
address (`RAY_ADDRESS`) a local one is started with --cpus CPUs.

On a machine with two CPU cores shared with the driver, 2 actors show Ray's overhead (serialising jobs
and results, a second process competing for the same cores), not the speed-up they give on machines or
GPUs of their own. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from infill.batch_fill import Backend, FailedFile, LocalFill, batches_of
from infill.fill import FillJob, FillOptions
from infill.holes import find_holes
from infill.progress import Progress
from remote.ray_refactor import RayFill, RayOptions, import_ray

NAMES = ("total", "items", "scores", "values", "rows", "names", "counts", "paths")


def make_files(count: int, seed: int = 0) -> dict[str, str]:
    """`count` small Python modules, the same for the same seed."""
    rng = random.Random(seed)
    files = {}
    for number in range(count):
        a, b = rng.sample(NAMES, 2)
        files[f"module_{number:03d}.py"] = (
            f'"""Helpers for {a} and {b}."""\n\n\n'
            f"def merge_{a}({a}, {b}):\n"
            f'    """Combine {a} with {b}, keeping the order of {a}."""\n'
            f"    # <|hole:{rng.choice((16, 24, 32))}|>\n\n\n"
            f"def count_{b}({b}):\n    return len({b}) + {rng.randint(0, 9)}\n"
        )
    return files


def jobs_for(files: dict[str, str], folder: str = "src") -> list[FillJob]:
    return [FillJob(text, tuple(find_holes(text)), "python", f"{folder}/{name}") for name, text in files.items()]


def timed_fill(backend: Backend, batches: list[list[FillJob]], engines: int) -> tuple[float, int, int]:
    """(seconds, new tokens, failed files) of filling every batch, after a warm-up batch per engine
    (files of another seed: nothing of them is cached for the timed ones)."""
    warm_up = batches_of(jobs_for(make_files(engines * len(batches[0]), seed=1), "warm_up"), len(batches[0]))
    backend.fill(warm_up, Progress(0, enabled=False))
    started = time.perf_counter()
    outcomes = backend.fill(batches, Progress(0, enabled=False))
    seconds = time.perf_counter() - started
    tokens = sum(o.stats.new_tokens for o in outcomes if not isinstance(o, FailedFile))
    return seconds, tokens, sum(isinstance(o, FailedFile) for o in outcomes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ray_refactor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--batch", type=int, default=2, help="files per engine call (as refactor --batch)")
    parser.add_argument("--actors", default="1,2", help="actor counts to measure")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local cluster started when none is given")
    args = parser.parse_args(argv)
    import torch

    from engine import DenoiseParams, Engine

    torch.set_num_threads(1)
    params, options = DenoiseParams.fast(), FillOptions(retries=0, keep_invalid=True)
    batches = batches_of(jobs_for(make_files(args.files)), args.batch)
    rows: list[dict[str, Any]] = []

    started = time.perf_counter()
    local = LocalFill(Engine.load(args.model, device="cpu"), params, options, lambda message: None)
    load = time.perf_counter() - started
    seconds, tokens, failed = timed_fill(local, batches, 1)
    rows.append({"way": "local", "actors": 0, "start_s": load, "fill_s": seconds, "tokens": tokens, "failed": failed})

    ray = import_ray()
    owns = not ray.is_initialized()
    if owns:
        ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        for actors in (int(n) for n in args.actors.split(",")):
            started = time.perf_counter()
            pool = RayFill.start(RayOptions(None, actors, 0.0, args.model, "cpu"), params, options, lambda m: None)
            load = time.perf_counter() - started
            try:
                seconds, tokens, failed = timed_fill(pool, batches, actors)
            finally:
                pool.close()
            rows.append({"way": "ray", "actors": actors, "start_s": load, "fill_s": seconds, "tokens": tokens,
                         "failed": failed})
    finally:
        if owns:
            ray.shutdown()

    base = rows[0]["fill_s"]
    print(f"model {args.model}; {args.files} files, batch {args.batch}; one torch thread per engine")
    print(f"{'way':>5} {'actors':>6} {'start s':>8} {'fill s':>8} {'files/s':>8} {'tok/s':>8} {'vs local':>8} {'failed':>6}")
    for row in rows:
        row["files_per_s"] = args.files / row["fill_s"]
        row["speedup_vs_local"] = base / row["fill_s"]
        print(f"{row['way']:>5} {row['actors']:>6} {row['start_s']:>8.2f} {row['fill_s']:>8.2f} "
              f"{row['files_per_s']:>8.2f} {row['tokens'] / row['fill_s']:>8.1f} {row['speedup_vs_local']:>8.2f} "
              f"{row['failed']:>6}")
    by_actors = {row["actors"]: row for row in rows if row["way"] == "ray"}
    summary: dict[str, Any] = {"benchmark": "ray_refactor", "model": args.model, "files": args.files,
                               "batch": args.batch, "local_files_per_s": round(rows[0]["files_per_s"], 3)}
    for actors, row in by_actors.items():
        summary[f"ray_{actors}_files_per_s"] = round(row["files_per_s"], 3)
    if 1 in by_actors and 2 in by_actors:
        summary["two_vs_one_actor"] = round(by_actors[1]["fill_s"] / by_actors[2]["fill_s"], 3)
    summary["rows"] = [{k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()} for row in rows]
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
