"""Code from other files, put in the canvas above the text before the cursor: llama.cpp's `input_extra`
chunks and Tabby's `segments.declarations` and snippet lists.

Each chunk goes under a comment line naming its file, the least relevant first, so the ones nearest the
cursor are the last the window planner drops when the canvas is too long (it keeps the lines nearest the
gap). This is the stand-in the repository-context work (issue 23) replaces with its own formatting.
"""

from __future__ import annotations

from collections.abc import Sequence


def other_files_above(chunks: Sequence[tuple[str, str]], comment_prefix: str) -> str:
    """`chunks` as (filename, text), least relevant first, as text to put before the prefix."""
    return "".join(f"{comment_prefix} {name}\n{text.rstrip(chr(10))}\n\n" for name, text in chunks if text.strip())
