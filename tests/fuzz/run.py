"""Fuzz the real language server: `python tests/fuzz/run.py --messages 10000 --seed 1`.

Prints a table of what was sent and found, then one JSON line. Exit status 0 when every property held
(no crash, no unanswered or doubly answered request, no document mismatch, the final request worked).
The model is a tiny random checkpoint built on the fly unless --model names one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fuzz_driver import FuzzReport, run_fuzz
from fuzz_report import model_for_run, print_counts, print_outcome


def print_report(report: FuzzReport) -> None:
    print_counts(("message kind", "sent"), {k: (n,) for k, n in report.kinds.most_common()}, 24)
    rerun = f"python tests/fuzz/run.py --seed {report.seed} --messages {report.messages}"
    print_outcome("fuzz", report.ok, report.summary(), report.problems, rerun, 24)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--model", help="checkpoint folder (default: a tiny random one)")
    parser.add_argument("--big-every", type=int, default=2500, help="messages between 10 MB documents (0: none)")
    parser.add_argument("--log-file", type=Path, help="the server's log")
    args = parser.parse_args(argv)
    with model_for_run(args.model, "dream") as model:
        report = run_fuzz(args.messages, args.seed, model, args.log_file, args.big_every)
    print_report(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
