"""Repository context: does code from the project's other files help complete a line that uses it?

    python -m bench.repo_context [--model default] [--limit N] [--seed 0] [--packages a2a-sdk,...]
                                 [--budget TOKENS] [--threads N] [--save FILE.json]

Tasks: bench/data/repo_context/holes.jsonl, single lines of real packages the training corpus never saw,
each using a function, class or constant defined in another module of its package (bench.repo_context_data
builds them; MANIFEST.json there says where the packages come from). A task is the hole's file with that
line's text removed, its indentation kept, and the cursor after the indentation: a user about to write the
line. `plan_completion` picks the spot (a task it declines is skipped and counted), and the default sampler
(`denoise_params("fast")`, as `dcomplete infill` runs it) fills it with one-line suggestions on, twice:
without context, and with `ContextBuilder(package folder).build(...).header` as `FillOptions.context`,
a fresh builder per task (so a task's context does not depend on which tasks ran before it).

Per condition: exact match (the generated line, stripped, equals the original, stripped), edit similarity
(difflib.SequenceMatcher ratio of the two stripped lines, in [0, 1]; no edit scores 0), and the seconds of
each fill (wall clock around `fill_many`, after one untimed warm-up fill). The context columns: mean header
tokens (`RepoContext.tokens`), the share of tasks whose header holds a chunk of a file that defines one of
the line's names (`def%`), and the builder's mean milliseconds. The last line of stdout is JSON.
"""

from __future__ import annotations

import argparse
import difflib
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.datasets import fixed_subset
from bench.repo_sources import DATA, Hole, sources

CONDITIONS = ("without", "with")


@dataclass(frozen=True)
class Task:
    hole: Hole
    file: Path
    text: str
    offset: int


def load_holes(packages: Sequence[str] = (), root: Path = DATA) -> list[Hole]:
    """The holes of the named packages (a name or a folder, e.g. `a2a-sdk` or `a2a-sdk-0.2.8`; none: all)."""
    manifest = json.loads((root / "MANIFEST.json").read_text(encoding="utf-8"))
    folders = {e["folder"] for e in manifest["packages"]
               if not packages or e["name"] in packages or e["folder"] in packages}
    unknown = set(packages) - {e["name"] for e in manifest["packages"]} - {e["folder"] for e in manifest["packages"]}
    if unknown:
        raise ValueError(f"unknown packages {', '.join(sorted(unknown))}; the data has "
                         f"{', '.join(e['name'] for e in manifest['packages'])}")
    holes = []
    for line in (root / "holes.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["package"] in folders:
            holes.append(Hole.from_row(row))
    return holes


def make_task(hole: Hole, root: Path | None = None) -> Task:
    """The hole's file (below `root`, the unpacked sources by default) with the line's text gone (its
    indentation kept), the cursor at the line's end."""
    file = (root or sources()) / hole.package / hole.path
    lines = file.read_text(encoding="utf-8").split("\n")
    if lines[hole.line] != hole.text:
        raise ValueError(f"{hole.task_id}: the file's line is not the hole's text")
    indent = hole.text[: len(hole.text) - len(hole.text.lstrip())]
    lines[hole.line] = indent
    offset = sum(len(line) + 1 for line in lines[: hole.line]) + len(indent)
    return Task(hole, file, "\n".join(lines), offset)


def generated_line(text: str, line: int, edit: Any) -> str:
    """The hole's line of the document after the edit (None: unfilled)."""
    if edit is not None:
        text = text[: edit.start] + edit.new_text + text[edit.end:]
    return text.split("\n")[line]


def edit_similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def build_context(task: Task, tokenizer: Any, max_length: int, budget: int | None) -> tuple[Any, float]:
    """The repository context a fresh builder rooted at the package's folder gives, and its seconds."""
    from infill.context import ContextBuilder
    from infill.context.builder import DEFAULT_TOKENS

    started = time.perf_counter()
    builder = ContextBuilder(sources() / task.hole.package, tokenizer, max_length=max_length,
                             budget=DEFAULT_TOKENS if budget is None else budget)
    context = builder.build(task.file, task.text, task.offset, "python")
    return context, time.perf_counter() - started


def run_task(engine: Any, params: Any, task: Task, spot: Any, context: str) -> dict[str, Any]:
    """One fill of `task` with `context` in the canvas's header, scored against the original line."""
    from infill.canvas import ContextOverflow
    from infill.fill import FillJob, FillOptions, fill_many

    options = FillOptions(one_line=True, context=context)
    started = time.perf_counter()
    try:
        result = fill_many(engine, [FillJob(task.text, (spot,), "python")], params, options=options)[0]
    except ContextOverflow:
        return {"line": "", "exact": False, "similarity": 0.0, "seconds": time.perf_counter() - started,
                "notes": ["context overflow"]}
    seconds = time.perf_counter() - started
    line = generated_line(task.text, task.hole.line, result.edits[0] if result.edits else None).strip()
    truth = task.hole.text.strip()
    return {"line": line, "exact": line == truth, "similarity": edit_similarity(line, truth),
            "seconds": seconds, "notes": list(result.notes)}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means (exact match and similarity as fractions) of a group of scored tasks."""
    out: dict[str, Any] = {"n": len(rows)}
    if not rows:
        return out
    for condition in CONDITIONS:
        results = [row[condition] for row in rows]
        seconds = [r["seconds"] for r in results]
        out[condition] = {"exact_match": sum(r["exact"] for r in results) / len(rows),
                          "edit_similarity": statistics.fmean(r["similarity"] for r in results),
                          "seconds_mean": statistics.fmean(seconds), "seconds_p50": statistics.median(seconds)}
    out["context_tokens"] = statistics.fmean(row["context"]["tokens"] for row in rows)
    out["context_has_definition"] = sum(row["context"]["has_definition"] for row in rows) / len(rows)
    out["context_seconds"] = statistics.fmean(row["context"]["seconds"] for row in rows)
    out["exact_match_gain"] = out["with"]["exact_match"] - out["without"]["exact_match"]
    return out


def format_table(groups: dict[str, dict[str, Any]]) -> str:
    header = (f"{'package':<24} {'n':>4}  {'EM w/o':>6} {'EM ctx':>6} {'gain':>6}  {'ES w/o':>6} {'ES ctx':>6}"
              f"  {'ms w/o':>7} {'ms ctx':>7} {'p50 w/o':>7} {'p50 ctx':>7}  {'tok':>4} {'def%':>5} {'build':>6}")
    lines = [header, "-" * len(header)]
    for name, g in groups.items():
        if not g["n"]:
            continue
        a, b = g["without"], g["with"]
        lines.append(
            f"{name:<24} {g['n']:>4}  {100 * a['exact_match']:6.1f} {100 * b['exact_match']:6.1f} "
            f"{100 * g['exact_match_gain']:+6.1f}  {100 * a['edit_similarity']:6.1f} {100 * b['edit_similarity']:6.1f}"
            f"  {1000 * a['seconds_mean']:7.0f} {1000 * b['seconds_mean']:7.0f} {1000 * a['seconds_p50']:7.0f} "
            f"{1000 * b['seconds_p50']:7.0f}  {g['context_tokens']:4.0f} {100 * g['context_has_definition']:5.1f} "
            f"{1000 * g['context_seconds']:6.1f}")
    lines.append("EM: exact match %, ES: edit similarity % (difflib ratio of the stripped lines); ms: mean and p50 "
                 "milliseconds per fill; tok: mean context tokens; def%: tasks whose context holds a chunk of a "
                 "file defining one of the line's names; build: ms to build the context")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.repo_context", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default", help="Engine.load spec (folder, repo id, 'default')")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when present)")
    parser.add_argument("--dtype", default=None, help="float32, bfloat16, int8")
    parser.add_argument("--limit", type=int, default=None, help="a seeded subset of N holes (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="the subset's seed")
    parser.add_argument("--packages", default="", help="comma-separated package names or folders (default: all)")
    parser.add_argument("--budget", type=int, default=None,
                        help="context tokens (default: the builder's, infill.context.builder.DEFAULT_TOKENS)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--save", default=None, metavar="FILE.json",
                        help="write every task's outputs in both conditions and the summary to this file")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be >= 1, got {args.limit}")
    if args.budget is not None and args.budget < 0:
        parser.error(f"--budget must be >= 0, got {args.budget}")
    return args


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from infill.windows import plan_completion

    try:
        holes = load_holes([p for p in args.packages.split(",") if p])
    except ValueError as error:
        print(f"bench.repo_context: {error}", file=sys.stderr)
        return 2
    tasks = [make_task(hole) for hole in fixed_subset(holes, args.limit, args.seed)]
    planned = [(task, plan_completion(task.text, task.offset, "python")) for task in tasks]
    declined = [task.hole.task_id for task, spot in planned if spot is None]
    _progress(f"{len(tasks)} holes from {len({t.hole.package for t in tasks})} packages; "
              f"plan_completion declined {len(declined)}")

    from engine import Engine, ModelLoadError
    from infill.user_settings import denoise_params

    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)
    try:
        engine = Engine.load(args.model, device=args.device, dtype=args.dtype)
    except (ModelLoadError, OSError) as error:
        print(f"bench.repo_context: cannot load model {args.model!r}: {error}", file=sys.stderr)
        return 2
    params = denoise_params("fast")
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    for index, (task, spot) in enumerate(((t, s) for t, s in planned if s is not None), 1):
        if index == 1:
            run_task(engine, params, task, spot, "")  # warm-up: lazy set-up stays out of the timings
        context, build_seconds = build_context(task, engine.tokenizer, engine.max_length, args.budget)
        hole = task.hole
        row: dict[str, Any] = {
            "task_id": hole.task_id, "package": hole.package, "truth": hole.text.strip(), "names": list(hole.names),
            "context": {"tokens": context.tokens, "seconds": build_seconds, "chunks": context.describe(),
                        "has_definition": any(c.path in hole.defined_in for c in context.chunks)},
            "without": run_task(engine, params, task, spot, ""),
            "with": run_task(engine, params, task, spot, context.header),
        }
        rows.append(row)
        if index % 10 == 0:
            _progress(f"{index}/{len(tasks) - len(declined)} in {time.monotonic() - started:.0f}s")

    packages = sorted({row["package"] for row in rows})
    groups = {name: summarize([r for r in rows if r["package"] == name]) for name in packages}
    groups["total"] = summarize(rows)
    print(format_table(groups))
    report = {"benchmark": "repo_context", "model": args.model, "seed": args.seed, "limit": args.limit,
              "budget": args.budget, "holes": len(tasks), "declined": len(declined), "sampler": "fast",
              "one_line": True, "similarity": "difflib.SequenceMatcher ratio of the stripped lines",
              "total": groups["total"], "packages": {name: groups[name] for name in packages}}
    if args.save:
        Path(args.save).write_text(json.dumps({**report, "declined_tasks": declined, "tasks": rows}, indent=1),
                                   encoding="utf-8")
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
