"""Next edits for clients that ask for a window of the file rewritten (Mercury Edit's `code_to_edit`, Tabby's
next version of the file) rather than for edits anywhere: the candidate regions are those within the
window's lines, and every next edit shown there is applied to the window's text. A window with nothing to
change comes back as it was, which is these protocols' "no suggestion"."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from infill.next_edit.edits import DocEdit
from infill.next_edit.suggest import NextEdit, NextEditSettings, OpenDocument, suggest

if TYPE_CHECKING:
    from engine import DenoiseParams
    from engine.api import EngineLike

def applied(text: str, edits: Sequence[NextEdit]) -> str:
    """`text` with non-overlapping edits (offsets in `text`) applied."""
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.new_text + text[edit.end :]
    return text


@dataclass(frozen=True)
class Rewritten:
    text: str  # the window's text after the edits
    edits: list[NextEdit]  # those applied, offsets in the document


def rewrite(engine: EngineLike, document: OpenDocument, history: Sequence[DocEdit], start: int, end: int,
            params: DenoiseParams | None = None, settings: NextEditSettings | None = None,
            cancel: Callable[[], bool] | None = None, context: str = "") -> Rewritten:
    """`document.text[start:end]` with the next edits after the newest edit of `document` in `history` that
    lie within the window's lines applied (unchanged when there are none)."""
    text = document.text
    window = text[start:end]
    if not any(e.uri == document.uri for e in history):
        return Rewritten(window, [])
    last = text.count("\n", 0, end - 1 if end > start and text[end - 1] == "\n" else end)
    shown = suggest(engine, document, history, params, settings or NextEditSettings(), (), cancel, context,
                    (text.count("\n", 0, start), last))
    kept = inside(shown, document.uri, text, start, end)
    moved = [replace(e, start=e.start - start, end=e.end - start) for e in kept]
    return Rewritten(applied(window, moved), kept)


def inside(edits: Sequence[NextEdit], uri: str, text: str, start: int, end: int) -> list[NextEdit]:
    """The edits of document `uri` (whose text is `text`) within `start`..`end`; a whole-line edit that also
    takes the line break right after the window, and writes one, cut back to the window; the others left out."""
    kept = []
    for edit in edits:
        if edit.uri != uri or edit.start < start:
            continue
        if edit.end <= end:
            kept.append(edit)
        elif edit.end == end + 1 and text[end : end + 1] == "\n" and edit.new_text.endswith("\n"):
            kept.append(replace(edit, end=end, new_text=edit.new_text[:-1], old_text=edit.old_text[:-1]))
    return kept
