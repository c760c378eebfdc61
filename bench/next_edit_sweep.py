"""Choosing next edits' aggressiveness on bench.next_edit's tasks: the model runs once per task, keeping every
candidate region's proposal and margin (`infill.next_edit.suggest.proposals`), and each policy (a margin
threshold, with or without the rename rule's text) is then judged and scored from those same proposals, as
`suggest` would have shown them. Prints one row per policy and ends with one JSON line; `--save` keeps the raw
proposals, `--load` scores saved ones again without the model.

`--verdicts` collects as `low` and `medium` run (the model's own proposals are not shown there, so only the
regions the rename rule rewrites are filled, each for its verdict alone) and scores the rule's thresholds
alone; without it, every region is filled to the end, as `high` runs.

    python -m bench.next_edit_sweep --limit 60 --save runs/next_edit_sweep.json [--verdicts]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.datasets import fixed_subset
from bench.next_edit import format_table, score, summarize
from bench.next_edit_model import URI
from bench.next_edit_tasks import Suggestion, Task, load_tasks
from infill.next_edit.suggest import Thresholds

RULE = (-math.inf, -8.0, -6.0, -4.0, -3.0, -2.5, -2.0, -1.0, 0.0, 1.0, 2.0)
MODEL = (None, -math.inf, 0.0, 2.0, 4.0, 6.0, 8.0)


def collect(tasks: Sequence[Task], model: str, device: str | None, verdicts: bool,
            canvas_tokens: int | None = None) -> list[dict[str, Any]]:
    """Per task: the seconds the model took and every region's proposal, as JSON-ready records."""
    from engine import DenoiseParams, Engine
    from infill.next_edit.edits import edit_between
    from infill.next_edit.suggest import NextEditSettings, OpenDocument, proposals

    engine = Engine.load(model, device=device)
    params = DenoiseParams.fast()
    settings = NextEditSettings(aggressiveness="medium" if verdicts else "high")
    if canvas_tokens is not None:
        settings = dataclasses.replace(settings, canvas_tokens=canvas_tokens)
    out = []
    for n, task in enumerate(tasks, 1):
        edit = edit_between(URI.format(task.path), task.before, task.current)
        started = time.perf_counter()
        made = [] if edit is None else proposals(engine, OpenDocument(edit.uri, task.current, task.language),
                                                 [edit], params, settings)[1]
        seconds = time.perf_counter() - started
        out.append({"id": task.id, "seconds": seconds,
                    "regions": [{"first": p.region.first, "last": p.region.last, "kind": p.region.kind,
                                 "start": p.region.start, "end": p.region.end, "current": p.current,
                                 "proposal": p.proposal, "margin": p.margin, "rival_margin": p.rival_margin}
                                for p in made]})
        if n % 10 == 0:
            print(f"next_edit_sweep: {n}/{len(tasks)} tasks", file=sys.stderr, flush=True)
    return out


def decide(task: Task, record: dict[str, Any], thresholds: Thresholds, rule: bool) -> Suggestion | None:
    """What `suggest` shows first for this task's proposals under the policy."""
    from infill.next_edit.candidates import Region
    from infill.next_edit.edits import edit_between
    from infill.next_edit.suggest import OpenDocument, Proposal, judge_all

    edit = edit_between(URI.format(task.path), task.before, task.current)
    if edit is None:
        return None
    made = [Proposal(Region(edit.uri, r["first"], r["last"], r["kind"], r["start"], r["end"]), r["current"],
                     r["proposal"], r["margin"], r.get("rival_margin")) for r in record["regions"]]
    document = OpenDocument(edit.uri, task.current, task.language)
    shown = [j.shown for j in judge_all(edit, made, thresholds, rule, {edit.uri: document}) if j.shown is not None]
    return Suggestion(shown[0].start, shown[0].end, shown[0].new_text) if shown else None


def _name(value: float | None) -> str:
    return "off" if value is None else "any" if value == -math.inf else f"{value:g}"


def sweep(tasks: Sequence[Task], records: Sequence[dict[str, Any]], verdicts: bool) -> dict[str, dict[str, Any]]:
    """Every policy's summary: the rule's text by its rival margin and the model's own proposals by theirs
    (`rule=A model=B`), and the model's own alone (`model=B`); the rule's alone for verdict records."""
    by_id = {r["id"]: r for r in records}
    models = (None,) if verdicts else MODEL
    policies = [(f"rule={_name(r)} model={_name(m)}", Thresholds(r, m), True) for r in RULE for m in models]
    policies += [(f"model={_name(m)}", Thresholds(math.inf, m), False) for m in models if m is not None]
    return {name: summarize([score(t, decide(t, by_id[t.id], thresholds, rule), by_id[t.id]["seconds"])
                             for t in tasks])
            for name, thresholds, rule in policies}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.next_edit_sweep", description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="default")
    parser.add_argument("--device", default=None)
    parser.add_argument("--save", default=None, metavar="FILE.json")
    parser.add_argument("--load", default=None, metavar="FILE.json", help="score saved proposals, no model")
    parser.add_argument("--canvas-tokens", type=int, default=None, help="NextEditSettings.canvas_tokens")
    parser.add_argument("--verdicts", action="store_true",
                        help="collect the rule's verdicts alone, as low and medium run (not with --load)")
    args = parser.parse_args(argv)
    tasks = fixed_subset(load_tasks(), args.limit, args.seed)
    verdicts = args.verdicts
    if args.load:
        saved = json.loads(Path(args.load).read_text(encoding="utf-8"))
        records, verdicts = saved["records"], saved.get("verdicts", False)
        tasks = [t for t in tasks if t.id in {r["id"] for r in records}]
    else:
        records = collect(tasks, args.model, args.device, verdicts, args.canvas_tokens)
    if args.save:
        Path(args.save).write_text(json.dumps({"records": records, "verdicts": verdicts}), encoding="utf-8")
    summaries = sweep(tasks, records, verdicts)
    print(format_table(summaries))
    print(json.dumps({"benchmark": "next_edit_sweep", "tasks": len(tasks), "limit": args.limit, "seed": args.seed,
                      "verdicts": verdicts, "policies": summaries}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
