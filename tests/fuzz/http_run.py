"""Fuzz the real HTTP engine server: `python tests/fuzz/http_run.py --requests 5000 --seed 1 --model default`.

Prints a table of what was sent and what came back, then one JSON line. Exit status 0 when every
property held (every request answered, no 5xx, the expected status classes, error bodies with a message,
a completion working at the end, RSS growth under --max-growth-mb). The model is a tiny random anchored
checkpoint built on the fly unless --model names one (`default`: the bundled model).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fuzz_report import model_for_run, print_counts, print_outcome
from http_driver import HttpFuzzReport, run_http_fuzz


def print_report(report: HttpFuzzReport) -> None:
    kinds = {k: (n, report.slowest.get(k, 0.0)) for k, n in report.kinds.most_common()}
    print_counts(("request kind", "sent", "slowest s"), kinds, 28)
    print_counts(("status", "answers"), {s: (n,) for s, n in sorted(report.statuses.items())}, 28)
    rerun = f"python tests/fuzz/http_run.py --seed {report.seed} --requests {report.requests}"
    print_outcome("http_fuzz", report.ok, report.summary(), report.problems, rerun, 28)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--model", help="checkpoint folder or 'default' (default: a tiny random one)")
    parser.add_argument("--workers", type=int, default=8, help="requests in flight at once")
    parser.add_argument("--max-growth-mb", type=float, default=400.0,
                        help="RSS growth that fails the run (and 120 MB over the second half of the requests)")
    args = parser.parse_args(argv)
    with model_for_run(args.model, "anchored") as model:
        report = run_http_fuzz(args.requests, args.seed, model, args.workers, args.max_growth_mb)
    print_report(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
