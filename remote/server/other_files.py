"""Code from other files, put at the top of the canvas above the document's text: llama.cpp's `input_extra`
chunks and Tabby's `segments.declarations` and snippet lists.

Each chunk goes under a comment line naming its file. They sit in the canvas's header, which the window
planner never crops, so they stay the canvas's first tokens from one request to the next and a slot's
document cache keeps them (what llama.vim's warm-up requests are for); the chunks nearest the end (the most
relevant, or the most recent) that fit in a share of the context are kept, the first of them cut to its
leading lines when it does not fit whole. This is the stand-in the
repository-context work (issue 23) replaces with its own formatting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from infill.canvas import encode

SHARE = 3  # other files take at most 1/SHARE of the model's context


def other_files_above(chunks: Sequence[tuple[str, str]], comment_prefix: str, tokenizer: Any,
                      max_length: int) -> str:
    """`chunks` as (filename, text), least relevant first, formatted for the canvas's header: the last ones
    whose tokens fit in `max_length // SHARE`."""
    budget = max_length // SHARE
    kept: list[str] = []
    for name, text in reversed(chunks):
        if not text.strip():
            continue
        lines = text.rstrip("\n").split("\n")
        while lines and budget > 0:
            block = f"{comment_prefix} {name}\n" + "\n".join(lines) + "\n\n"
            if (size := len(encode(tokenizer, block))) <= budget:
                budget -= size
                kept.append(block)
                break
            lines = lines[: max(0, min(len(lines) - 1, len(lines) * budget // size))]
        if budget <= 0 or not lines:
            break
    return "".join(reversed(kept))
