"""Trivial, model-free completions that put the model's scores in perspective.

- `empty_middle`: insert nothing. Some tasks pass anyway (the masked line was redundant for the tests).
- `most_similar_line`: the gap has no query of its own, so the query is the line just before it (the last
  non-blank line of the prefix). Among all other non-blank lines of the prefix and the suffix, the one with
  the highest `difflib.SequenceMatcher` ratio to the query (both stripped) wins; ties go to the line closest
  to the gap. It is re-indented to the gap's indentation: the query's indentation, plus four spaces when the
  query ends with ":" (a block opens, so the gap must be indented deeper), and ends with a newline because
  every middle in these benchmarks is whole lines.
"""
from __future__ import annotations

import difflib
from collections.abc import Callable

from bench.datasets import InfillTask

Baseline = Callable[[InfillTask], str]


def empty_middle(task: InfillTask) -> str:
    return ""


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def gap_indentation(query: str) -> str:
    indent = _indentation(query)
    return indent + "    " if query.rstrip().endswith(":") else indent


def most_similar_line(task: InfillTask) -> str:
    prefix_lines = task.prefix.splitlines()
    query_index = next((i for i in range(len(prefix_lines) - 1, -1, -1) if prefix_lines[i].strip()), None)
    if query_index is None:
        return ""
    query = prefix_lines[query_index]
    # (distance to the gap, text) for every candidate line
    candidates = [(len(prefix_lines) - i, line) for i, line in enumerate(prefix_lines) if i != query_index]
    candidates += [(i + 1, line) for i, line in enumerate(task.suffix.splitlines())]
    best_text, best_key = "", None
    for distance, line in candidates:
        text = line.strip()
        if not text:
            continue
        key = (difflib.SequenceMatcher(None, query.strip(), text).ratio(), -distance)
        if best_key is None or key > best_key:
            best_text, best_key = text, key
    if best_key is None:
        return ""
    return gap_indentation(query) + best_text + "\n"


BASELINES: dict[str, Baseline] = {"empty": empty_middle, "similar_line": most_similar_line}
