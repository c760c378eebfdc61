"""Hole files through the CLI: does `dcomplete refactor --holes --write` leave every file parsing?

    python -m bench.holes [--model default] [--limit 100] [--seed 0]

HumanEval single-line tasks (a seeded subset, as bench.quality draws it) written as files whose middle line
is a hole marker (`# <|hole|>` at the middle's indentation), then one `dcomplete refactor DIR --holes
--write --json` over the folder, as a user would run it. Per file afterwards: filled (no marker left) and
parsing, the marker kept (the CLI's notes say why), or broken (neither: what must never happen); and the
pass@1 of the filled files, each run with its tests in bench.humaneval_exec's sandbox (a file that kept
its marker fails). The last line is JSON.
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


def hole_file(task: InfillTask) -> str:
    """The task's file with its middle line replaced by a hole marker at the middle's indentation."""
    first = task.middle.split("\n", 1)[0]
    indent = first[: len(first) - len(first.lstrip())]
    return f"{task.prefix}{indent}# <|hole|>\n{task.suffix}"


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.holes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--limit", type=int, default=100, help="tasks (a seeded subset of the single-line split)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None, help="parallel sandboxed test runs")
    args = parser.parse_args(argv)
    tasks = fixed_subset(load_humaneval("single"), args.limit, args.seed)
    with tempfile.TemporaryDirectory(prefix="dcomplete-holes-") as folder:
        paths = [Path(folder, f"task_{i:03d}.py") for i in range(len(tasks))]
        for path, task in zip(paths, tasks):
            path.write_text(hole_file(task), encoding="utf-8")
        run = subprocess.run([sys.executable, "-m", "cli", "refactor", folder, "--holes", "--write", "--json",
                              "--model", args.model], capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return run.returncode
        notes = {Path(f["file"]).name: f["notes"] for f in json.loads(run.stdout)["files"]}
        after = [path.read_text(encoding="utf-8") for path in paths]
    filled = [not find_holes(text, "python") and parses(text) for text in after]
    kept = [bool(find_holes(text, "python")) for text in after]
    broken = [not f and not k for f, k in zip(filled, kept)]
    programs = [check_program(text, task.test, task.entry_point) for text, task in zip(after, tasks)]
    results = run_programs(programs, workers=args.workers)
    passed = [r.passed and f for r, f in zip(results, filled)]
    print(f"{len(tasks)} HumanEval single-line hole files, one `dcomplete refactor --holes --write` (model {args.model})")
    print(f"filled and parsing {sum(filled)}, marker kept {sum(kept)}, broken {sum(broken)}; pass@1 {sum(passed)}")
    reasons: dict[str, int] = {}
    for path, keep in zip(paths, kept):
        if keep:
            for note in notes.get(path.name, []) or ["(no note)"]:
                reason = note.split(": ", 1)[-1]
                reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        print(f"  kept, {count}: {reason}")
    print(json.dumps({"benchmark": "holes", "model": args.model, "tasks": len(tasks), "seed": args.seed,
                      "filled_parsing": sum(filled), "marker_kept": sum(kept), "broken": sum(broken),
                      "pass_at_1": sum(passed) / len(tasks), "kept_reasons": reasons}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
