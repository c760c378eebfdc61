"""Next-edit suggestions: after the user's edit, does a suggester propose the follow-up edit elsewhere in the
file, and stay silent when there is none?

    python -m bench.next_edit [--suggesters none,rename] [--limit N] [--seed 0] [--packages alembic,...]
                              [--model default] [--device D] [--dtype T] [--save FILE.json]

Tasks: bench/data/next_edit (bench.next_edit_data builds them from consecutive PyPI releases; its
MANIFEST.json says which). A task is a file at release N with one real hunk of the N->N+1 diff applied as
the user's edit (`current`). *related*: the expected next edit is another hunk of that file and release
that makes the same token-level change; *noise*: the file's only change in the release was the user's
edit, so the right answer is no suggestion.

A suggester is a callable `(Task) -> Suggestion | None` (`Suggester`); `--suggesters` names registered ones
(`SUGGESTERS`: the baselines `none` and `rename`, and whatever `register` adds) or `module:factory` paths,
a factory being called once with the run's `SuggesterOptions`. A suggestion that changes nothing counts as
none; one whose offsets lie outside `current` counts as a wrong suggestion (`invalid`). Per suggester:
- related: exact (the file after the suggestion equals `expected`, trailing whitespace of each line
  ignored), exact_any (equals `expected` or the file after one of the task's alternative hunks, each an
  equally right next edit), location (the suggestion's lines overlap the target's; an insertion's target
  is the line before and after it), suggestion rate;
- noise: no-edit precision, the share of noise tasks without a suggestion;
- reversal rate over all suggestions (`is_reversal`);
- p50/p95 milliseconds of wall time per call;
- in the JSON, exact and location again for the related tasks whose target lies below the cursor and above.
Stdout is a table and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bench.datasets import fixed_subset
from bench.next_edit_baselines import never, rename
from bench.next_edit_model import FACTORIES as MODEL_SUGGESTERS
from bench.next_edit_tasks import DataError, Hunk, Suggestion, Task, changes, load_tasks, tokens


class Suggester(Protocol):
    def __call__(self, task: Task, /) -> Suggestion | None: ...


@dataclass(frozen=True)
class SuggesterOptions:
    """What a suggester factory may need: the model to load and the run's seed."""

    model: str = "default"
    device: str | None = None
    dtype: str | None = None
    seed: int = 0


SuggesterFactory = Callable[[SuggesterOptions], Suggester]
SUGGESTERS: dict[str, SuggesterFactory] = {"none": lambda options: never, "rename": lambda options: rename,
                                           **MODEL_SUGGESTERS}


def register(name: str) -> Callable[[SuggesterFactory], SuggesterFactory]:
    """Add a suggester factory under `name` (for `--suggesters name`)."""
    def add(factory: SuggesterFactory) -> SuggesterFactory:
        SUGGESTERS[name] = factory
        return factory
    return add


def make_suggester(name: str, options: SuggesterOptions) -> Suggester:
    """A registered suggester, or the factory at `module:attribute` called with `options`."""
    if name in SUGGESTERS:
        return SUGGESTERS[name](options)
    if ":" not in name:
        raise ValueError(f"unknown suggester {name!r}; registered: {', '.join(SUGGESTERS)} (or module:factory)")
    module, attribute = name.split(":", 1)
    try:
        factory = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"suggester {name!r}: {error}") from None
    return factory(options)  # type: ignore[no-any-return]


def normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.split("\n"))


def line_range(text: str, start: int, end: int) -> tuple[int, int]:
    """The 1-based lines of `text` that the span [start, end) touches (an empty span: its line)."""
    first = text.count("\n", 0, start) + 1
    return first, text.count("\n", 0, max(start, end - 1)) + 1


def hunk_lines(hunk: Hunk) -> tuple[int, int]:
    """The lines a hunk replaces; for an insertion the lines on both sides of it."""
    return (hunk.start, hunk.end) if hunk.old else (max(1, hunk.start - 1), hunk.start)


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _count(haystack: list[str], needle: tuple[str, ...]) -> int:
    n = len(needle)
    return sum(tuple(haystack[i : i + n]) == needle for i in range(len(haystack) - n + 1))


def is_reversal(task: Task, suggestion: Suggestion) -> bool:
    """The suggestion undoes the user's edit: the file after it equals `before`, or it touches the lines
    the user's edit wrote and there either brings back tokens the edit removed (a token-level change of
    the edit, `changes`, that names something: its removed run occurs more often in the suggestion's text
    than in the text it replaces) or takes away tokens the edit only inserted."""
    if normalise(suggestion.apply(task.current)) == normalise(task.before):
        return True
    if not overlaps(task.user_lines, line_range(task.current, suggestion.start, suggestion.end)):
        return False
    old = tokens(task.current[suggestion.start : suggestion.end])
    new = tokens(suggestion.new_text)
    for change in changes(task.user_edit.old, task.user_edit.new):
        if not change.names_something:
            continue
        if change.removed and _count(new, change.removed) > _count(old, change.removed):
            return True
        if not change.removed and _count(new, change.added) < _count(old, change.added):
            return True
    return False


def direction(task: Task) -> str | None:
    """Where a related task's target lies: "below" or "above" the cursor (None for noise)."""
    if task.target is None:
        return None
    return "below" if task.target.start > task.cursor_line else "above"


def score(task: Task, suggestion: Suggestion | None, seconds: float) -> dict[str, Any]:
    """One suggestion scored against its task."""
    invalid = suggestion is not None and not 0 <= suggestion.start <= suggestion.end <= len(task.current)
    if suggestion is not None and not invalid and suggestion.apply(task.current) == task.current:
        suggestion = None
    row: dict[str, Any] = {"id": task.id, "kind": task.kind, "direction": direction(task),
                           "suggested": suggestion is not None,
                           "seconds": seconds, "exact": False, "exact_any": False, "location": False,
                           "location_any": False, "reversal": False, "invalid": invalid, "suggestion": None}
    if suggestion is None or invalid:
        return row
    after = normalise(suggestion.apply(task.current))
    lines = line_range(task.current, suggestion.start, suggestion.end)
    row["suggestion"] = {"start": suggestion.start, "end": suggestion.end, "new_text": suggestion.new_text,
                         "lines": list(lines)}
    row["reversal"] = is_reversal(task, suggestion)
    if task.target is not None:
        current = task.current.split("\n")
        right = [task.expected] + ["\n".join(h.apply(current)) for h in task.alternatives]
        row["exact"] = after == normalise(task.expected)
        row["exact_any"] = any(after == normalise(text) for text in right)
        row["location"] = overlaps(lines, hunk_lines(task.target))
        row["location_any"] = any(overlaps(lines, hunk_lines(h)) for h in (task.target, *task.alternatives))
    return row


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)] if ordered else 0.0


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    related = [r for r in rows if r["kind"] == "related"]
    noise = [r for r in rows if r["kind"] == "noise"]
    suggested = [r for r in rows if r["suggested"]]
    seconds = [r["seconds"] for r in rows]

    def share(group: Sequence[dict[str, Any]], key: str, want: bool = True) -> float | None:
        return sum(bool(r[key]) == want for r in group) / len(group) if group else None

    by_direction = {side: {"related": len(group), "exact": share(group, "exact"), "location": share(group, "location")}
                    for side in ("below", "above") for group in [[r for r in related if r["direction"] == side]]}
    return {"related": len(related), "exact": share(related, "exact"), "exact_any": share(related, "exact_any"),
            "location": share(related, "location"), "location_any": share(related, "location_any"),
            "suggestion_rate": share(related, "suggested"), "noise": len(noise),
            "no_edit_precision": share(noise, "suggested", want=False),
            "suggestions": len(suggested), "invalid": sum(r["invalid"] for r in rows),
            "reversal_rate": share(suggested, "reversal"),
            "latency_ms_p50": 1000 * percentile(seconds, 0.5), "latency_ms_p95": 1000 * percentile(seconds, 0.95),
            "by_direction": by_direction}


def run(suggester: Suggester, tasks: Sequence[Task]) -> list[dict[str, Any]]:
    """Each task's suggestion, timed (wall clock around the call) and scored."""
    rows = []
    for task in tasks:
        started = time.perf_counter()
        suggestion = suggester(task)
        rows.append(score(task, suggestion, time.perf_counter() - started))
    return rows


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:5.1f}"


def format_table(summaries: dict[str, dict[str, Any]]) -> str:
    header = (f"{'suggester':<14} {'rel':>4} {'exact':>6} {'any':>6} {'loc':>6} {'sugg':>6}  {'noise':>5} "
              f"{'quiet':>6}  {'revert':>6}  {'p50 ms':>8} {'p95 ms':>8}")
    lines = [header, "-" * len(header)]
    for name, s in summaries.items():
        lines.append(f"{name:<14} {s['related']:>4} {_percent(s['exact']):>6} {_percent(s['exact_any']):>6} "
                     f"{_percent(s['location']):>6} {_percent(s['suggestion_rate']):>6}  {s['noise']:>5} "
                     f"{_percent(s['no_edit_precision']):>6}  {_percent(s['reversal_rate']):>6}  "
                     f"{s['latency_ms_p50']:8.3f} {s['latency_ms_p95']:8.3f}")
    lines.append("values in %. rel: related tasks; exact: file equals the expected one (trailing whitespace "
                 "ignored); any: or an alternative hunk's; loc: suggestion overlaps the target's lines; sugg: "
                 "related tasks with a suggestion; quiet: noise tasks without one; revert: suggestions that "
                 "undo the user's edit; ms: wall time per call")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.next_edit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--suggesters", default="none,rename",
                        help=f"comma-separated: {', '.join(SUGGESTERS)} or module:factory (default: none,rename)")
    parser.add_argument("--limit", type=int, default=None, help="a seeded subset of N tasks (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="the subset's seed, and the suggesters'")
    parser.add_argument("--packages", default="", help="comma-separated package names (default: all)")
    parser.add_argument("--model", default="default", help="for model suggesters: Engine.load spec")
    parser.add_argument("--device", default=None, help="for model suggesters: cpu, cuda, ...")
    parser.add_argument("--dtype", default=None, help="for model suggesters: float32, bfloat16, int8")
    parser.add_argument("--save", default=None, metavar="FILE.json", help="write every task's score here too")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be >= 1, got {args.limit}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    options = SuggesterOptions(args.model, args.device, args.dtype, args.seed)
    try:
        tasks = fixed_subset(load_tasks(packages=[p for p in args.packages.split(",") if p]), args.limit, args.seed)
        suggesters = {name: make_suggester(name, options) for name in args.suggesters.split(",") if name}
    except (DataError, ValueError) as error:
        print(f"bench.next_edit: {error}", file=sys.stderr)
        return 2
    scored = {name: run(suggester, tasks) for name, suggester in suggesters.items()}
    summaries = {name: summarize(rows) for name, rows in scored.items()}
    print(format_table(summaries))
    report = {"benchmark": "next_edit", "tasks": len(tasks), "related": sum(t.kind == "related" for t in tasks),
              "noise": sum(t.kind == "noise" for t in tasks), "packages": sorted({t.package for t in tasks}),
              "limit": args.limit, "seed": args.seed, "suggesters": summaries}
    if args.save:
        Path(args.save).write_text(json.dumps({**report, "tasks": scored}, indent=1), encoding="utf-8")
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
