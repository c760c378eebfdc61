"""Choosing next edits' aggressiveness on bench.next_edit's tasks: the model runs once per task, keeping every
candidate region's proposal and margin (`infill.next_edit.suggest.proposals`), and each policy (a margin
threshold, with or without the rename rule's text) is then judged and scored from those same proposals, as
`suggest` would have shown them. Prints one row per policy and ends with one JSON line; `--save` keeps the raw
proposals, `--load` scores saved ones again without the model.

    python -m bench.next_edit_sweep --limit 60 --save runs/next_edit_sweep.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.datasets import fixed_subset
from bench.next_edit import format_table, score, summarize
from bench.next_edit_model import URI
from bench.next_edit_tasks import Suggestion, Task, load_tasks

THRESHOLDS = (-1e9, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def collect(tasks: Sequence[Task], model: str, device: str | None) -> list[dict[str, Any]]:
    """Per task: the seconds the model took and every region's proposal, as JSON-ready records."""
    from engine import DenoiseParams, Engine
    from infill.next_edit.edits import edit_between
    from infill.next_edit.suggest import OpenDocument, proposals

    engine = Engine.load(model, device=device)
    params = DenoiseParams.fast()
    out = []
    for n, task in enumerate(tasks, 1):
        edit = edit_between(URI.format(task.path), task.before, task.current)
        started = time.perf_counter()
        made = [] if edit is None else proposals(engine, OpenDocument(edit.uri, task.current, task.language),
                                                 [edit], params)[1]
        seconds = time.perf_counter() - started
        out.append({"id": task.id, "seconds": seconds,
                    "regions": [{"first": p.region.first, "last": p.region.last, "kind": p.region.kind,
                                 "start": p.region.start, "end": p.region.end, "current": p.current,
                                 "proposal": p.proposal, "margin": p.margin, "rival_margin": p.rival_margin}
                                for p in made]})
        if n % 10 == 0:
            print(f"next_edit_sweep: {n}/{len(tasks)} tasks", file=sys.stderr, flush=True)
    return out


def decide(task: Task, record: dict[str, Any], threshold: float, rule: bool, by_margin: bool = False
           ) -> Suggestion | None:
    """What `suggest` shows first for this task's proposals under the policy; `by_margin`: the shown region
    the model was surest of, not the first in the candidates' rank."""
    from infill.next_edit.candidates import Region
    from infill.next_edit.edits import edit_between
    from infill.next_edit.suggest import judge

    edit = edit_between(URI.format(task.path), task.before, task.current)
    if edit is None:
        return None
    shown = []
    for r in record["regions"]:
        region = Region(edit.uri, r["first"], r["last"], r["kind"], r["start"], r["end"])
        judged = judge(edit, region, r["current"], r["proposal"], r["margin"], r["start"], threshold, rule,
                       r.get("rival_margin"))
        if judged.shown is not None:
            shown.append(judged.shown)
    if not shown:
        return None
    best = max(shown, key=lambda s: -1e9 if s.margin is None else s.margin) if by_margin else shown[0]
    return Suggestion(best.start, best.end, best.new_text)


def sweep(tasks: Sequence[Task], records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by_id = {r["id"]: r for r in records}
    out = {}
    for rule, by_margin in ((True, False), (True, True), (False, False)):
        for threshold in THRESHOLDS:
            rows = [score(t, decide(t, by_id[t.id], threshold, rule, by_margin), by_id[t.id]["seconds"])
                    for t in tasks]
            name = f"{'rule' if rule else 'model'}{'-surest' if by_margin else ''}" \
                   f"@{'any' if threshold < -1e8 else threshold}"
            out[name] = summarize(rows)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.next_edit_sweep", description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="default")
    parser.add_argument("--device", default=None)
    parser.add_argument("--save", default=None, metavar="FILE.json")
    parser.add_argument("--load", default=None, metavar="FILE.json", help="score saved proposals, no model")
    args = parser.parse_args(argv)
    tasks = fixed_subset(load_tasks(), args.limit, args.seed)
    if args.load:
        records = json.loads(Path(args.load).read_text(encoding="utf-8"))["records"]
        tasks = [t for t in tasks if t.id in {r["id"] for r in records}]
    else:
        records = collect(tasks, args.model, args.device)
    if args.save:
        Path(args.save).write_text(json.dumps({"records": records}), encoding="utf-8")
    summaries = sweep(tasks, records)
    print(format_table(summaries))
    print(json.dumps({"benchmark": "next_edit_sweep", "tasks": len(tasks), "limit": args.limit, "seed": args.seed,
                      "policies": summaries}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
