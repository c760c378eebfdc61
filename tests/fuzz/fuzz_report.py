"""What the fuzz runs of a real server (the language server's, the HTTP engine server's) report, and what
their runners share: the model they serve, and how they print a table of counts, the summary, the
problems, and one JSON line."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_PROBLEMS = 30


@dataclass
class RunReport:
    """The fields every fuzz run has; each driver's report adds its own counts."""

    seed: int
    crashed: bool = False
    final_request_ok: bool = False
    seconds: float = 0.0
    rss_before_mb: float = 0.0
    rss_after_mb: float = 0.0
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)


@contextlib.contextmanager
def model_for_run(given: str | None, family: str) -> Iterator[str]:
    """The checkpoint a long run serves: `given` (a folder, or 'default' for the bundled model), else a tiny
    random one of `family` ("dream", "llada" or "anchored") in a temporary folder, removed after the run."""
    if given is not None:
        yield given
        return
    from tests.support.checkpoints import make_tiny_anchored, make_tiny_checkpoint

    with tempfile.TemporaryDirectory(prefix="dcomplete-fuzz-model-") as folder:
        made = make_tiny_anchored(folder) if family == "anchored" else make_tiny_checkpoint(folder, family=family)
        yield str(made)


def print_counts(header: tuple[str, ...], rows: Mapping[Any, tuple[Any, ...]], width: int) -> None:
    """A table: the first column `width` wide, the others right-aligned under their headers."""
    print(f"{header[0]:<{width}} " + " ".join(f"{h:>10}" for h in header[1:]))
    for key, values in rows.items():
        print(f"{key!s:<{width}} " + " ".join(f"{v:>10.2f}" if isinstance(v, float) else f"{v!s:>10}"
                                                for v in values))
    print()


def print_outcome(bench: str, ok: bool, summary: dict[str, Any], problems: list[str], rerun: str,
                  width: int) -> None:
    """The summary, the problems, how to replay a failure, and the JSON line."""
    for key, value in summary.items():
        print(f"{key:<{width}} {value!s:>12}")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    if not ok:
        print(f"FAILED with seed {summary['seed']}: rerun with `{rerun}`")
    print(json.dumps({"bench": bench, "ok": ok, **summary}))
