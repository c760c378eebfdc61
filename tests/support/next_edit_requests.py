"""Next-edit request bodies as the clients lay them out, for the engine server's tests:

- Mercury Edit's, as Continue's `MercuryCoderProvider` writes it (continuedev/continue
  core/nextEdit/templating: the template's sections, `current_file_path:` first, the window's tags on lines
  of their own around the cursor's line and the 5 below, the diffs without createPatch's first two lines)
  and sends it (core/llm/llms/Inception.ts: its system prompt, then the user message, `stream: true`);
- Tabby's `mode: "next_edit_suggestion"` (TabbyML/tabby crates/tabby/src/services/completion.rs).

The edit is the sample's: `JsonResponse` renamed `self.render` on line 7 (`next_edit_sample`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.support.next_edit_sample import NEW, OLD, VIEWS

EDITED = VIEWS.replace(OLD + '({"error"', NEW + '({"error"', 1)
LINE = 7
DIFF = (f"--- views.py\n+++ views.py\n@@ -{LINE + 1},1 +{LINE + 1},1 @@\n-{VIEWS.split(chr(10))[LINE]}\n"
        f"+{EDITED.split(chr(10))[LINE]}\n")


def mercury_content(text: str, line: int, column: int, first: int, last: int, diffs: list[str],
                    snippets: Sequence[tuple[str, str]] = (), path: str = "views.py") -> str:
    """The user message: `text` with the cursor at (`line`, `column`) and lines `first`..`last` the window."""
    lines = text.split("\n")
    lines[line] = lines[line][:column] + "<|cursor|>" + lines[line][column:]
    marked = lines[:first] + ["<|code_to_edit|>"] + lines[first : last + 1] + ["<|/code_to_edit|>"] + lines[last + 1 :]
    viewed = "\n".join(f"<|recently_viewed_code_snippet|>\ncode_snippet_file_path: {p}\n{code}\n"
                       "<|/recently_viewed_code_snippet|>" for p, code in snippets)
    return (f"<|recently_viewed_code_snippets|>\n{viewed}\n<|/recently_viewed_code_snippets|>\n\n"
            f"<|current_file_content|>\ncurrent_file_path: {path}\n" + "\n".join(marked) + "\n<|/current_file_content|>\n\n"
            "<|edit_diff_history|>\n" + "\n".join(diffs) + "\n<|/edit_diff_history|>\n")


def continue_body(content: str, **extra: Any) -> dict[str, Any]:
    return {"model": "mercury-coder", "messages": [{"role": "system", "content": "You are Mercury, ..."},
                                                   {"role": "user", "content": content}],
            "max_tokens": None, "temperature": 0.0, "presence_penalty": 1.5, "stop": ["<|endoftext|>"],
            "stream": True, **extra}


def rename_window() -> tuple[str, int, int]:
    """The sample's Mercury message after the rename, with Continue's window (the cursor's line and 5 more)."""
    column = EDITED.split("\n")[LINE].index(NEW) + len(NEW)
    return mercury_content(EDITED, LINE, column, LINE, LINE + 5, [DIFF]), LINE, LINE + 5


def tabby_body(original: str, diff: str, current: str, **extra: Any) -> dict[str, Any]:
    cut = current.find(NEW) + len(NEW) if NEW in current else 0
    return {"language": "python", "mode": "next_edit_suggestion",
            "segments": {"prefix": current[:cut], "suffix": current[cut:], "filepath": "views.py",
                         "edit_history": {"original_code": original, "edits_diff": diff, "current_version": current}},
            **extra}


def continue_text(events: str) -> str:
    """What Continue keeps of a streamed answer: the deltas' content joined, then the text between the first
    "```\\n" and the last "\\n```" (MercuryCoderProvider.extractCompletion)."""
    content = "".join(json.loads(line[6:])["choices"][0]["delta"].get("content", "")
                      for line in events.splitlines() if line.startswith("data: {"))
    return content[content.index("```\n") + 4 : content.rindex("\n```")]
