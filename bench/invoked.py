"""Invoked completions: what a user waits for after pressing the key that asks for a suggestion and its
alternatives, for this checkout and another commit side by side.

    python -m bench.invoked [--model default] [--against REF] [--rounds 2] [--threads 2] [--files 3]

Each checkout (`--against REF`: the commit exported into a temporary folder, as `bench.first_start` does)
runs in a process of its own, its packages first on the path: the language server's inference backend
(`lsp_server.inference.InferenceBackend.complete`, what an invoked `textDocument/inlineCompletion` runs,
three alternatives, no repository context) at the ends of up to five assignment lines (cut after their
`= `) in the last two thirds of `--files` real Python files (bench.workload's sources), after one
automatic request on the file has kept its keys, as a user who has been typing there. The checkouts take
turns in each round. Reported per checkout: the median and the slowest request over all rounds, and the
alternatives found per request. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ALTERNATIVES = 3


def measure(model: str, files: int) -> dict[str, list[float]]:
    """In this process, on the checkout first on the path: ms and alternatives per invoked request."""
    import time

    import infill
    from bench.first_start import asks
    from bench.workload import source_files
    from lsp_server.inference import InferenceBackend
    from lsp_server.settings import Settings

    settings = Settings(model=model, context=False)
    backend = InferenceBackend()
    failure = backend.ensure_loaded(settings)
    if failure is not None:
        raise SystemExit(f"bench.invoked: the model did not load: {failure.message}")
    while backend.calibrate_step():  # the kernels a server serves with once its idle pieces ran: a checkout
        pass                         # whose prepared weights are not in the cache would time the defaults
    sources = sorted(source_files(), key=lambda p: p.stat().st_size)
    times: list[float] = []
    found: list[float] = []
    for path in sources[len(sources) // 3 : len(sources) // 3 + files]:
        for i, (text, position) in enumerate(asks(path.read_text())[:5]):
            offset = sum(len(line) + 1 for line in text.split("\n")[: position.line]) + position.character
            spot = infill.plan_completion(text, offset, language="python")
            if spot is None:
                continue
            if i == 0:
                backend.complete(text, spot, settings, "python", str(path), 1, lambda: False, automatic=True)
            started = time.perf_counter()
            outcome = backend.complete(text, spot, settings, "python", str(path), ALTERNATIVES, lambda: False)
            times.append((time.perf_counter() - started) * 1000)
            found.append(len(outcome.replacements))
    return {"ms": times, "alternatives": found}


def run_in(checkout: Path, model: str, files: int, threads: int) -> dict[str, list[float]]:
    env = dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS=str(threads))
    done = subprocess.run([sys.executable, "-c", "import sys, json; from bench.invoked import measure; "
                           "print(json.dumps(measure(sys.argv[1], int(sys.argv[2]))))", model, str(files)],
                          env=env, cwd=checkout, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    from bench.first_start import compile_here, export

    parser = argparse.ArgumentParser(prog="python -m bench.invoked", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--against", default="", help="the commit to compare with ('' for none)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--files", type=int, default=3)
    args = parser.parse_args(argv)
    compile_here()
    with tempfile.TemporaryDirectory(prefix="dcomplete-invoked-") as tmp:
        checkouts = {"this checkout": REPO}
        if args.against:
            other = export(args.against, Path(tmp))
            (other / "bench" / "invoked.py").write_text(Path(__file__).read_text())  # this measurement
            checkouts = {args.against: other, **checkouts}
        results: dict[str, dict[str, list[float]]] = {name: {"ms": [], "alternatives": []} for name in checkouts}
        for round_ in range(args.rounds):
            for name, checkout in checkouts.items():
                got = run_in(checkout, args.model, args.files, args.threads)
                for key in got:
                    results[name][key] += got[key]
                print(f"  round {round_ + 1} {name:>14}: p50 {statistics.median(got['ms']):,.0f} ms, "
                      f"slowest {max(got['ms']):,.0f} ms over {len(got['ms'])} requests", flush=True)
    summary = {name: {"requests": len(r["ms"]), "p50_ms": round(statistics.median(r["ms"])),
                      "mean_ms": round(statistics.mean(r["ms"])), "max_ms": round(max(r["ms"])),
                      "alternatives": round(statistics.mean(r["alternatives"]), 2)} for name, r in results.items()}
    print(f"model {args.model}, {args.threads} thread(s), {args.rounds} round(s); invoked completions, "
          f"{ALTERNATIVES} alternatives asked")
    print(f"{'checkout':>14} {'requests':>8} {'p50 ms':>8} {'mean ms':>8} {'max ms':>8} {'alternatives':>12}")
    for name, row in summary.items():
        print(f"{name:>14} {row['requests']:>8} {row['p50_ms']:>8,} {row['mean_ms']:>8,} {row['max_ms']:>8,} "
              f"{row['alternatives']:>12}")
    print(json.dumps({"benchmark": "invoked", "model": args.model, "threads": args.threads, "rounds": args.rounds,
                      "against": args.against or None, "results": summary}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
