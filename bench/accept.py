"""Acceptance: would a user take the suggestion? Real files the adapter's corpus never saw, one statement
line or one block emptied at seeded places, completed at the cursor the way the language server does.

    python -m bench.accept [--model default] [--lines 100] [--blocks 50] [--sampler fast,ar] [--seed 0]

Files: the installed sources of litestar, msgspec and uvicorn (none of them is in
training/packages.txt). A *line* task empties one single-line simple statement inside a function (the
cursor after its indentation, the lines around it kept); a *block* task empties the 2-6 line body of an
`if`/`for`/`while`/`with` (one line of the body's indentation left, the cursor at its end). Each task goes
through the server's own path: `infill.plan_completion` at the cursor (None: the server shows nothing),
the fill jobs and options `lsp_server.inference` builds under the default settings, and
`lsp_server.completion.to_suggestion` for what the editor shows. Per sampler and kind, over every task:
- shown: a suggestion was shown;
- exact: its first line equals the truth's (whitespace at the ends ignored);
- prefix: one of suggestion and truth starts with the other, sharing at least 10 characters (a user
  accepts it and types on, or accepts part of it);
- similarity: 1 - Levenshtein distance / the longer length, the suggestion against as many lines of the
  truth as it has (0 where nothing was shown);
- parses: of the shown suggestions, the share whose accepted file still parses (`ast`).
`fast` is the default sampler, `ar` the base alone from the prefix (the baseline of every figure). The
last line is JSON.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGES = ("litestar", "msgspec", "uvicorn")
SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr, ast.Raise, ast.Assert)
COMPOUND = (ast.If, ast.For, ast.While, ast.With)
PREFIX_CHARS = 10


@dataclass(frozen=True)
class Task:
    kind: str  # "line" or "block"
    path: str
    text: str  # the file with the statement or body emptied
    cursor: int
    truth: str  # what was there after the cursor (the body's lines with the first one's indent stripped)


def source_files(packages: tuple[str, ...] = PACKAGES) -> list[Path]:
    files: list[Path] = []
    for name in packages:
        root = Path(importlib.import_module(name).__file__ or "").parent
        files += sorted(p for p in root.rglob("*.py") if p.stat().st_size > 2000 and "test" not in p.name)
    return files


def _functions(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def candidates(path: Path) -> tuple[list[Task], list[Task]]:
    """Every line task and block task of one file."""
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [], []
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    line_tasks: list[Task] = []
    block_tasks: list[Task] = []
    for function in _functions(tree):
        for node in ast.walk(function):
            if isinstance(node, SIMPLE) and node.lineno == node.end_lineno and not _docstring(node):
                row = node.lineno - 1
                content = lines[row].strip()
                if 10 <= len(content) <= 100 and lines[row].lstrip().startswith(content[:1]):
                    indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
                    emptied = "\n".join([*lines[:row], indent, *lines[row + 1 :]])
                    line_tasks.append(Task("line", str(path), emptied, starts[row] + len(indent), content))
            elif isinstance(node, COMPOUND) and node.body:
                first, last = node.body[0].lineno - 1, (node.body[-1].end_lineno or node.body[-1].lineno) - 1
                body = lines[first : last + 1]
                if first > node.lineno - 1 and 2 <= len(body) <= 6 and all(len(b) <= 100 for b in body):
                    indent = body[0][: len(body[0]) - len(body[0].lstrip())]
                    emptied = "\n".join([*lines[:first], indent, *lines[last + 1 :]])
                    truth = "\n".join(body)[len(indent) :]
                    block_tasks.append(Task("block", str(path), emptied, starts[first] + len(indent), truth))
    return line_tasks, block_tasks


def _docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def tasks(lines: int, blocks: int, seed: int) -> list[Task]:
    """`lines` line tasks and `blocks` block tasks, a seeded sample over every candidate of every file."""
    line_pool: list[Task] = []
    block_pool: list[Task] = []
    for path in source_files():
        found_lines, found_blocks = candidates(path)
        line_pool += found_lines
        block_pool += found_blocks
    rng = random.Random(seed)
    return rng.sample(line_pool, min(lines, len(line_pool))) + rng.sample(block_pool, min(blocks, len(block_pool)))


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def score(task: Task, shown: str | None) -> dict[str, float]:
    """The task's scores for the suggestion `shown` (the text it inserts at the cursor; None: nothing)."""
    if not shown:
        return {"shown": 0.0, "exact": 0.0, "prefix": 0.0, "similarity": 0.0}
    first = shown.split("\n", 1)[0].strip()
    exact = float(first == task.truth.split("\n", 1)[0].strip())
    a, b = shown.strip(), task.truth.strip()
    common = min(len(a), len(b))
    prefix = float(common >= PREFIX_CHARS and (a.startswith(b) or b.startswith(a)))
    compared = "\n".join(task.truth.split("\n")[: shown.count("\n") + 1]).strip()
    similarity = 1.0 - levenshtein(a, compared) / max(len(a), len(compared), 1)
    accepted = task.text[: task.cursor] + shown + task.text[task.cursor :]
    try:
        ast.parse(accepted)
        parses = 1.0
    except SyntaxError:
        parses = 0.0
    return {"shown": 1.0, "exact": exact, "prefix": prefix, "similarity": similarity, "parses": parses}


def suggest(engine: Any, task: Task, params: Any, settings: Any) -> str | None:
    """What the language server would show at the task's cursor, as the text it inserts there."""
    import infill
    from lsp_server.completion import CompletionQuery, to_suggestion
    from lsp_server.inference import Replacement, fill_jobs

    spot = infill.plan_completion(task.text, task.cursor, language="python")
    if spot is None:
        return None
    jobs, options = fill_jobs([(task.text, [spot], None)], settings, "python")
    (result,) = infill.fill_many(engine, jobs, params, options=options)
    query = CompletionQuery(task.text, task.text, task.cursor)
    for edit in result.edits:
        suggestion = to_suggestion(query, Replacement(edit.start, edit.end, edit.new_text), settings.multiline)
        if suggestion is not None:
            return suggestion.insert_text[task.cursor - suggestion.start :]
    return None


def run(engine: Any, sample: list[Task], sampler: str, seed: int) -> dict[str, dict[str, float]]:
    from bench.quality import sampler_params
    from lsp_server.inference import InferenceBackend
    from lsp_server.settings import Settings

    settings = Settings()
    params = InferenceBackend().params(settings) if sampler == "fast" else sampler_params(sampler, seed)
    rows: dict[str, dict[str, float]] = {}
    for kind in ("line", "block"):
        picked = [t for t in sample if t.kind == kind]
        if not picked:
            continue
        started = time.perf_counter()
        scores = [score(t, suggest(engine, t, params, settings)) for t in picked]
        shown = [s for s in scores if s["shown"]]
        rows[kind] = {
            "n": len(picked),
            **{key: sum(s[key] for s in scores) / len(picked) for key in ("shown", "exact", "prefix", "similarity")},
            "parses": sum(s["parses"] for s in shown) / len(shown) if shown else 0.0,
            "seconds_per_task": (time.perf_counter() - started) / len(picked),
        }
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.accept", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--lines", type=int, default=100, help="line tasks")
    parser.add_argument("--blocks", type=int, default=50, help="block tasks")
    parser.add_argument("--sampler", default="fast,ar", help="comma-separated: fast (the default), ar")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    samplers = args.sampler.split(",")
    if set(samplers) - {"fast", "ar"}:
        parser.error(f"--sampler: choose from fast, ar (got {args.sampler})")
    from engine import Engine

    engine = Engine.load(args.model)
    sample = tasks(args.lines, args.blocks, args.seed)
    results = {sampler: run(engine, sample, sampler, args.seed) for sampler in samplers}
    print(f"model {engine.name}; {len(sample)} tasks from {', '.join(PACKAGES)} (seed {args.seed}); values in %")
    print(f"{'sampler':>7} {'kind':>5} {'n':>4} {'shown':>6} {'exact':>6} {'prefix':>6} {'similar':>7} "
          f"{'parses':>6} {'s/task':>6}")
    for sampler, rows in results.items():
        for kind, r in rows.items():
            print(f"{sampler:>7} {kind:>5} {int(r['n']):>4} {100 * r['shown']:>6.1f} {100 * r['exact']:>6.1f} "
                  f"{100 * r['prefix']:>6.1f} {100 * r['similarity']:>7.1f} {100 * r['parses']:>6.1f} "
                  f"{r['seconds_per_task']:>6.2f}")
    print(json.dumps({"benchmark": "accept", "model": engine.name, "seed": args.seed, "packages": list(PACKAGES),
                      "rows": {s: {k: {m: round(v, 4) for m, v in r.items()} for k, r in rows.items()}
                               for s, rows in results.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
