"""The user's recent edits as the canvas header the model reads above the document: each edit's lines before
and after, as a diff in comments of the document's language (the old lines with `-`, the new with `+`, no
context lines: Copilot's history format), newest last, within a token budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from infill.next_edit.edits import DocEdit

MOST_EDITS = 4
MOST_LINES = 12  # of one edit's old or new lines


def _name(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


def history_header(edits: Sequence[DocEdit], comment: str, tokenizer: Any = None, budget: int = 256) -> str:
    """The header for the newest `MOST_EDITS` of `edits` (oldest first): what fits in `budget` tokens (by
    `tokenizer`, else 3 characters a token), the newest kept first; "" for none."""
    blocks: list[str] = []
    used = 0
    for edit in reversed(list(edits)[-MOST_EDITS:]):
        lines = [f"{comment} {'Accepted suggestion' if edit.accepted else 'Edit'} in {_name(edit.uri)}:"]
        lines += [f"{comment} -{line}" for line in edit.old_lines.rstrip("\n").split("\n")[:MOST_LINES] if edit.old_lines]
        lines += [f"{comment} +{line}" for line in edit.new_lines.rstrip("\n").split("\n")[:MOST_LINES] if edit.new_lines]
        block = "\n".join(lines) + "\n"
        cost = len(tokenizer.encode(block, add_special_tokens=False)) if tokenizer is not None else len(block) // 3
        if used + cost > budget:
            break
        blocks.insert(0, block)
        used += cost
    return "".join(blocks) + "\n" if blocks else ""
