"""Model suggesters for bench.next_edit: dcomplete's next edits (`infill.next_edit`) on a loaded engine, and
the base model rewriting a Zeta-size window at the best candidate, left to right.

- `dcomplete` (`-low`, `-high`: the aggressiveness; `-model`: without the rename rule's text): the first
  region `infill.next_edit.suggest` shows, after the user's edit (the task's one hunk) as the history;
- `zeta`: the base alone (adapter off: greedy left to right from the prefix) regenerating `ZETA_LINES` lines
  around the best candidate region, with the same history header; its output, when it differs, is the
  suggestion (what an autoregressive next-edit model does, minus its training).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from bench.next_edit_tasks import Suggestion, Task

if TYPE_CHECKING:
    from bench.next_edit import SuggesterOptions

ZETA_LINES = 9  # ~180 tokens of code, Zeta 2's region, centred on the candidate
URI = "file:///bench/{}"


def _engine(options: SuggesterOptions) -> Any:
    from engine import Engine

    return Engine.load(options.model, device=options.device, dtype=options.dtype)


def _edit(task: Task) -> Any:
    from infill.next_edit.edits import edit_between

    return edit_between(URI.format(task.path), task.before, task.current)


def dcomplete(options: SuggesterOptions, aggressiveness: str = "medium", rule: bool = True) -> Any:
    from engine import DenoiseParams
    from infill.next_edit.suggest import NextEditSettings, OpenDocument, suggest

    engine = _engine(options)
    settings = NextEditSettings(aggressiveness=aggressiveness, rule=rule)
    params = DenoiseParams.fast()

    def call(task: Task) -> Suggestion | None:
        edit = _edit(task)
        if edit is None:
            return None
        shown = suggest(engine, OpenDocument(edit.uri, task.current, task.language), [edit], params, settings)
        if not shown:
            return None
        best = shown[0]
        return Suggestion(best.start, best.end, best.new_text)

    return call


def zeta(options: SuggesterOptions) -> Any:
    from engine import DenoiseParams
    from infill.fill import FillOptions, fill
    from infill.languages import get_language
    from infill.next_edit.candidates import regions
    from infill.next_edit.header import history_header
    from infill.windows import plan_regenerate

    engine = _engine(options)
    params = dataclasses.replace(DenoiseParams.fast(), adapter=False)

    def call(task: Task) -> Suggestion | None:
        edit = _edit(task)
        if edit is None:
            return None
        spec = get_language(task.language)
        found = regions(edit, task.current, spec, most=1)
        if not found:
            return None
        lines = task.current.count("\n") + (0 if task.current.endswith("\n") else 1)
        middle = found[0].first
        first = max(0, middle - ZETA_LINES // 2)
        last = min(lines - 1, first + ZETA_LINES - 1)
        if first <= edit.line <= last:  # never rewrite the text being typed: start below it
            first = min(lines - 1, max(edit.end_line, middle))
            last = min(lines - 1, first + ZETA_LINES - 1)
        spot = plan_regenerate(task.current, first + 1, last + 1, spec, engine.tokenizer)
        header = history_header([edit], spec.comment_prefix, engine.tokenizer)
        result = fill(engine, task.current, [spot], params, spec, options=FillOptions(retries=0, context=header))
        if not result.edits:
            return None
        e = result.edits[0]
        return Suggestion(e.start, e.end, e.new_text)

    return call


FACTORIES = {
    "dcomplete": lambda o: dcomplete(o),
    "dcomplete-low": lambda o: dcomplete(o, "low"),
    "dcomplete-high": lambda o: dcomplete(o, "high"),
    "dcomplete-model": lambda o: dcomplete(o, rule=False),
    "zeta": zeta,
}
