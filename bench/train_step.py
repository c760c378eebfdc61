"""One training window's cost: CPU seconds, target rows per CPU second and peak resident memory of the
forward and backward (`training.packed`) on fixed 512-token windows of the validation split.

    python -m bench.train_step --windows 4 --save /tmp/windows.json           # draws the windows, keeps them
    python -m bench.train_step --windows 4 --load /tmp/windows.json --dtype bfloat16

`--load` runs the very windows (token ids, gaps, right contexts, mask blocks) another run saved, so that
two checkouts (this file copied into another one's bench/) or two number formats compare on the same work.
The first window warms the kernels and is left out of the rates. Peak memory is per window: the process's
peak resident set is reset before each (Linux `clear_refs`) and read after it, so it includes the model.
`training.train_adapter --bench` measures the whole loop (objective mix, optimizer) instead.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import platform
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.workload import package_versions
from engine.models.anchored import AdapterShape
from training.gaps import Corpus, Gap, choose_window, sample_gaps
from training.packed import build_rows, loss_of, packed_logits
from training.run_folder import BASE, build_model

VAL = Path(__file__).resolve().parents[1] / "corpus_cache" / "corpus" / "val.jsonl"


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def draw(corpus_path: Path, tokenizer: Any, eos: int, count: int, width: int, points: int, language: str,
         seed: int) -> list[dict[str, Any]]:
    """`count` windows of files in `language`, each with its gaps; gaps sharing a right context keep
    sharing it (one entry of `rights`)."""
    languages = [json.loads(line).get("language", "python") for line in corpus_path.open(encoding="utf-8")]
    corpus = Corpus(corpus_path, tokenizer)
    rng = random.Random(seed)
    windows: list[dict[str, Any]] = []
    while len(windows) < count:
        window = choose_window(corpus, rng, width)
        if languages[window.file] != language or window.length < width - 1:
            continue
        gaps = sample_gaps(corpus, window, rng, points)
        if not gaps:
            continue
        tf = corpus.file(window.file)
        rights: dict[int, int] = {}
        for gap in gaps:
            rights.setdefault(id(gap.right), len(rights))
        windows.append({"ids": [eos] + tf.ids[window.start : window.start + window.length].tolist(),
                        "rights": [g.right.tolist() for g in {id(g.right): g for g in gaps}.values()],
                        "gaps": [[g.a, g.b, rights[id(g.right)], g.kind] for g in gaps]})
    return windows


def run_window(model: Any, window: dict[str, Any], special: Any, seed: int, autocast: Any) -> dict[str, float]:
    ids = np.asarray(window["ids"])
    rights = [np.asarray(r, dtype=ids.dtype) for r in window["rights"]]
    gaps = [Gap(a, b, rights[r], kind) for a, b, r, kind in window["gaps"]]
    rows = build_rows(ids, gaps, special.mask, special.eos, 2, 7, random.Random(seed))
    reset_peak()
    before = status_kb("VmRSS")
    cpu, wall = time.process_time(), time.perf_counter()
    with autocast:
        loss, _ = loss_of(packed_logits(model, ids, gaps, rows, special.eos), rows)
    loss.backward()  # type: ignore[no-untyped-call]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    model.adapter.zero_grad(set_to_none=True)
    return {"rows": len(rows.ids), "gaps": len(gaps), "cpu_s": cpu, "wall_s": wall,
            "rss_before_gb": before / 1e6, "peak_rss_gb": status_kb("VmHWM") / 1e6}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.train_step", description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=int, default=4, help="windows measured, after one warm-up window")
    parser.add_argument("--dtype", default="float32", help="float32, bfloat16 or auto (training.precision)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=VAL)
    parser.add_argument("--language", default="python")
    parser.add_argument("--points", type=int, default=6, help="gap ends per window (train_adapter's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", type=Path, help="write the drawn windows here")
    parser.add_argument("--load", type=Path, help="run these windows instead of drawing")
    args = parser.parse_args(argv)
    if args.load and not args.load.is_file():
        parser.error(f"--load {args.load}: no such file (write one with --save)")
    if not args.load and not args.corpus.is_file():
        parser.error(f"--corpus {args.corpus}: no such file (build the corpus: python -m training.corpus)")
    torch.set_num_threads(args.threads)
    device = torch.device("cpu")
    model, tokenizer, special = build_model(BASE, AdapterShape(rank=16), device)
    dtype: str = "float32"
    autocast: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if args.dtype != "float32":
        if importlib.util.find_spec("training.precision") is None:
            parser.error(f"--dtype {args.dtype}: this checkout trains in float32 only (no training.precision)")
        from training import precision

        dtype = precision.choose(args.dtype, device)
        precision.prepare(model, dtype)
        autocast = precision.autocast(dtype, device)
    if args.load:
        windows = json.loads(args.load.read_text())
    else:
        windows = draw(args.corpus, tokenizer, special.eos, args.windows + 1, 512, args.points, args.language,
                       args.seed)
        if args.save:
            args.save.write_text(json.dumps(windows))
    results = [run_window(model, w, special, args.seed + i, autocast) for i, w in enumerate(windows)]
    measured = results[1:]
    cpu = sum(r["cpu_s"] for r in measured)
    rows = sum(r["rows"] for r in measured)
    summary = {"windows_per_cpu_s": round(len(measured) / cpu, 4), "target_rows_per_cpu_s": round(rows / cpu, 1),
               "rows_per_window": round(rows / len(measured), 1),
               "peak_rss_gb": round(max(r["peak_rss_gb"] for r in measured), 2),
               "rss_before_gb": round(max(r["rss_before_gb"] for r in measured), 2)}
    print(f"training window, dtype {dtype}; {platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"threads {args.threads}")
    print(f"{'window':>6} {'gaps':>5} {'rows':>5} {'cpu s':>7} {'wall s':>7} {'rows/cpu s':>10} {'RSS before':>10} {'peak RSS':>9}")
    for i, r in enumerate(results):
        label = "warmup" if i == 0 else str(i)
        print(f"{label:>6} {r['gaps']:>5} {r['rows']:>5} {r['cpu_s']:>7.1f} {r['wall_s']:>7.1f} "
              f"{r['rows'] / r['cpu_s']:>10.1f} {r['rss_before_gb']:>9.2f}G {r['peak_rss_gb']:>8.2f}G")
    print(json.dumps({"benchmark": "train_step", "dtype": dtype, "threads": args.threads, "sources": package_versions(),
                      **summary, "windows": [{k: round(v, 3) for k, v in r.items()} for r in results]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
