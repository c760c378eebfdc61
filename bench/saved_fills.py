"""Fills written to a JSONL file as they are made, so a long CPU run can stop and go on later.

`bench.quality --save PATH` appends one line per filled task: {"row", "benchmark", "task_id", "document",
"completion"}. Running the same command again skips every task already in PATH (the same row, benchmark
and task id), so a run that was stopped loses at most the fill it was making; `--saved-only` scores only
the tasks already saved (n says how many), to read figures before a run is complete. The model's cost
figures (tokens/s, forwards) count only the fills made by the current process.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.tally import Filled


class SavedFills:
    def __init__(self, path: str | None) -> None:
        self.path = Path(path) if path else None
        self._fills: dict[tuple[str, str, str], Filled] = {}
        if self.path is not None and self.path.exists():
            with self.path.open(encoding="utf-8") as handle:
                for line in handle:
                    if not line.strip():
                        continue
                    try:
                        item = json.loads(line)
                    except json.JSONDecodeError:  # the last line of a killed run may be cut short
                        continue
                    key = (item["row"], item["benchmark"], item["task_id"])
                    self._fills[key] = Filled(item["document"], item["completion"])

    def get(self, row: str, benchmark: str, task_id: str) -> Filled | None:
        return self._fills.get((row, benchmark, task_id))

    def put(self, row: str, benchmark: str, task_id: str, filled: Filled) -> Filled:
        self._fills[(row, benchmark, task_id)] = filled
        if self.path is not None:
            line = {"row": row, "benchmark": benchmark, "task_id": task_id, "document": filled.document,
                    "completion": filled.completion}
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        return filled
