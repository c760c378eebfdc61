"""Hole files through the CLI: does `dcomplete refactor --write` leave every file parsing?

    python -m bench.holes [--model default] [--limit 100] [--seed 0] [--split single|multi] [--regenerate]

HumanEval-infilling tasks (a seeded subset of --split, as bench.quality draws it) written as files whose
middle is a hole marker (`# <|hole|>` at the middle's first line's indentation: a multi-line middle is
one marker), then one `dcomplete refactor DIR --holes --write --json` over the folder, as a user would run
it. With --regenerate each file holds its whole canonical solution and the CLI regenerates the middle's
lines (`--lines FILE:A-B`), which bind names the code after them reads (infill.scope). Per file afterwards:
filled (no marker left, or lines changed) and parsing, kept (the marker, or the lines as they were: the
CLI's notes say why), or broken (neither: what must never happen); `unbinding`, the files with a result
that parsed but no longer defined a name the code after it reads (retried, then dropped unless a retry kept
it); `written_unbound`, the files written that leave such a read unbound (what the check prevents: 0 unless
the CLI runs without it); and the pass@1 of the filled files, each run with its tests in bench.humaneval_exec's sandbox (a file
that kept its marker or its lines counts as failing). The last line is JSON (`marker_kept` counts the
files kept either way).
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.datasets import InfillTask, fixed_subset, load_humaneval
from bench.humaneval_exec import check_program, run_programs
from infill.holes import find_holes
from infill.languages import get_language
from infill.scope import scope_reads, unresolved
from infill.settle import note_reason
from infill.windows import plan_regenerate


def hole_file(task: InfillTask) -> str:
    """The task's file with its middle replaced by a hole marker at the middle's first line's indentation."""
    first = task.middle.split("\n", 1)[0]
    indent = first[: len(first) - len(first.lstrip())]
    return f"{task.prefix}{indent}# <|hole|>\n{task.suffix}"


def middle_lines(task: InfillTask) -> tuple[int, int]:
    """The 1-based lines the middle spans in the task's whole file."""
    first = task.prefix.count("\n") + 1
    return first, first + max(task.middle.rstrip("\n").count("\n"), 0)


def unbinds(before: str, after: str, lines: tuple[int, int]) -> bool:
    """Whether `after` (`before` with the lines regenerated) leaves a read after them of a name they bound
    resolving to nothing (infill.scope, on its own: what a CLI without the check would have written)."""
    spec = get_language("python")
    reads = scope_reads(before, spec, [plan_regenerate(before, *lines, spec)])
    shift = len(after) - len(before)
    return after != before and any(unresolved(after, spec, [(read, read.offset + shift) for read in reads]))


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.holes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--limit", type=int, default=100, help="tasks (a seeded subset of the split)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=("single", "multi"), default="single")
    parser.add_argument("--regenerate", action="store_true",
                        help="regenerate the middle's lines of the whole file instead of filling a marker")
    parser.add_argument("--workers", type=int, default=None, help="parallel sandboxed test runs")
    args = parser.parse_args(argv)
    tasks = fixed_subset(load_humaneval(args.split), args.limit, args.seed)
    with tempfile.TemporaryDirectory(prefix="dcomplete-holes-") as folder:
        paths = [Path(folder, f"task_{i:03d}.py") for i in range(len(tasks))]
        before = [task.prefix + task.middle + task.suffix if args.regenerate else hole_file(task) for task in tasks]
        for path, text in zip(paths, before):
            path.write_text(text, encoding="utf-8")
        if args.regenerate:
            spots = [f"--lines={path}:{'-'.join(map(str, middle_lines(task)))}" for path, task in zip(paths, tasks)]
        else:
            spots = [folder, "--holes"]
        run = subprocess.run([sys.executable, "-m", "cli", "refactor", *spots, "--write", "--json",
                              "--model", args.model], capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return run.returncode
        results = {Path(f["file"]).name: f for f in json.loads(run.stdout)["files"]}
        after = [path.read_text(encoding="utf-8") for path in paths]
    if args.regenerate:
        kept = [text == old for text, old in zip(after, before)]
    else:
        kept = [bool(find_holes(text, "python")) for text in after]
    filled = [not k and parses(text) for k, text in zip(kept, after)]
    broken = [not f and not k for f, k in zip(filled, kept)]
    unbinding = sum(1 for path in paths if results.get(path.name, {}).get("unbinding"))
    written_unbound = sum(args.regenerate and unbinds(old, new, middle_lines(task))
                          for old, new, task in zip(before, after, tasks))
    programs = [check_program(text, task.test, task.entry_point) for text, task in zip(after, tasks)]
    outcomes = run_programs(programs, workers=args.workers)
    passed = [r.passed and f for r, f in zip(outcomes, filled)]
    what = "regenerated middles" if args.regenerate else "hole files"
    print(f"{len(tasks)} HumanEval {args.split}-line {what}, one `dcomplete refactor --write` (model {args.model})")
    print(f"filled and parsing {sum(filled)}, kept {sum(kept)}, broken {sum(broken)}, unbinding {unbinding}, "
          f"written unbound {written_unbound}; pass@1 {sum(passed)}")
    reasons: dict[str, int] = {}
    for path, keep in zip(paths, kept):
        if keep:
            for note in results.get(path.name, {}).get("notes", []) or ["(no note)"]:
                reason = note_reason(note)
                reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        print(f"  kept, {count}: {reason}")
    print(json.dumps({"benchmark": "holes", "model": args.model, "split": args.split,
                      "regenerate": args.regenerate, "tasks": len(tasks), "seed": args.seed,
                      "filled_parsing": sum(filled), "marker_kept": sum(kept),
                      "broken": sum(broken), "unbinding": unbinding, "written_unbound": written_unbound, "pass_at_1": sum(passed) / len(tasks),
                      "kept_reasons": reasons}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
