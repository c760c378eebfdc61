"""Well-formed bodies of every request shape `dcomplete engine` takes, drawn from the fuzzer's seeded rng,
and dotted paths into them (`leaf_paths`, `get`, `put`) for the hostile probes to change one field."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PREFIX = "import os\n\n\ndef total(items):\n    result = 0\n    for item in items:\n        result += "
SUFFIX = "\n    return result\n\n\nprint(total([1, 2, 3]))\n"
FILE_LINE = "current_file_path: a.py\n"
EDIT_DIFF = "--- a.py\n+++ a.py\n@@ -5,1 +5,1 @@\n-    result = 1\n+    result = 0\n"
"""The edit before a next-edit request: line 5 of PREFIX + SUFFIX was `result = 1`."""
PATHS = {"openai": "/v1/completions", "fim": "/v1/fim/completions", "llama_infill": "/infill",
         "llama_completion": "/completion", "tabby": "/v1/completions", "tabby_event": "/v1/events",
         "document": "/v1/infill", "canvas": "/v1/infill", "mercury_edit": "/v1/edit/completions",
         "tabby_edit": "/v1/completions"}
"""The endpoint of each shape (Tabby's completions share the OpenAI path; the server tells them apart)."""


@dataclass(frozen=True)
class EngineFacts:
    """What valid requests need from the server's `GET /v1/engine`: the ids a ready canvas is made of."""

    model: str
    mask_id: int
    bos_id: int | None
    prompt_ids: tuple[int, ...]
    break_ids: tuple[int, ...]


class Bodies:
    def __init__(self, rng: random.Random, facts: EngineFacts) -> None:
        self.rng, self.facts = rng, facts
        self.make: dict[str, Callable[[], dict[str, Any]]] = {
            "openai": self.openai, "fim": self.fim, "llama_infill": self.llama_infill,
            "llama_completion": self.llama_completion, "tabby": self.tabby, "tabby_event": self.tabby_event,
            "document": self.document, "canvas": self.canvas, "mercury_edit": self.mercury_edit,
            "tabby_edit": self.tabby_edit,
        }

    def shape(self) -> str:
        return self.rng.choice(list(self.make))

    def text(self) -> tuple[str, str]:
        rng = self.rng
        cut = rng.randint(0, len(PREFIX))
        return (PREFIX[:cut] if rng.random() < 0.3 else PREFIX), (SUFFIX if rng.random() < 0.8 else "")

    def extra(self) -> list[dict[str, str]]:
        return [{"filename": "util.py", "text": "def helper(x):\n    return x * 2\n"}] if self.rng.random() < 0.3 else []

    def openai(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        body: dict[str, Any] = {"model": self.facts.model, "prompt": prefix, "suffix": suffix,
                                "max_tokens": self.rng.randint(1, 8), "temperature": 0, "extra": self.extra()}
        if self.rng.random() < 0.3:
            body.update(n=2, temperature=0.7, seed=self.rng.randint(0, 1000), stop=["\n\n"])
        return body

    def fim(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        return {"prompt": prefix, "suffix": suffix, "max_tokens": self.rng.randint(1, 8), "random_seed": 3}

    def llama_infill(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        return {"input_prefix": prefix, "input_suffix": suffix, "n_predict": self.rng.choice([0, 1, 4, 8]),
                "input_extra": self.extra(), "id_slot": self.rng.choice([-1, 0, 1]), "samplers": ["top_k"]}

    def llama_completion(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        return {"prompt": f"<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>", "n_predict": 4,
                "cache_prompt": self.rng.random() < 0.5}

    def tabby(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        return {"language": "python", "segments": {"prefix": prefix, "suffix": suffix, "filepath": "a.py",
                                                   "declarations": [{"filepath": "b.py", "body": "x = 1\n"}]}}

    def tabby_event(self) -> dict[str, Any]:
        return {"type": self.rng.choice(["view", "select", "dismiss"]), "completion_id": "cmpl-1", "choice_index": 0}

    def params(self) -> dict[str, Any]:
        rng = self.rng
        return rng.choice([{}, {"steps": 4, "rule": "reference", "cache": "none"}, {"threshold": 0.5, "near": 2},
                           {"temperature": 0.8, "seed": 7, "top_p": 0.9}, {"block": 2, "eos_penalty": 1.0},
                           {"deadline_ms": 5000, "refresh_every": 3}])

    def document(self) -> dict[str, Any]:
        prefix, suffix = self.text()
        choice = self.rng.randrange(3)
        if choice == 0:
            return {"text": prefix + suffix, "language": "python", "params": self.params(),
                    "spots": [{"start": len(prefix), "end": len(prefix), "n_masks": 4, "kind": "line"}]}
        if choice == 1:
            return {"text": PREFIX + SUFFIX, "ranges": [[4, 4]], "params": self.params()}
        return {"text": "def f(x):\n    # <|hole:4|>\n    return x\n", "holes": True, "params": self.params()}

    def canvas(self) -> dict[str, Any]:
        f = self.facts
        head = ([f.bos_id] if f.bos_id is not None else []) + list(f.prompt_ids)
        ids = head + [f.mask_id] * 4 + list(f.break_ids)
        text = "def f(x):\n    return\n"
        slot = {"start": len(head), "end": len(head) + 4, "lead": " ", "tail": 0,
                "spot": {"start": len(text) - 1, "end": len(text) - 1, "n_masks": 4, "kind": "line"}}
        canvas: dict[str, Any] = {"ids": ids, "span_stops": [list(f.break_ids)], "span_leads": [" "],
                                  "span_ends": [{"text": text, "language": "python", "slot": slot, "before": []}]}
        return {"canvases": [canvas], "params": self.params()}

    def mercury_edit(self) -> dict[str, Any]:
        """Continue's Next Edit request to Mercury Edit: the file with the cursor at the end of its `result +=`
        line, a window of lines around it and, sometimes, the diff of the edit before."""
        rng = self.rng
        lines = (PREFIX + SUFFIX).split("\n")
        lines[6] += "<|cursor|>"
        first, last = rng.choice([4, 5, 6]), rng.choice([6, 7, 8])
        marked = lines[:first] + ["<|code_to_edit|>", *lines[first : last + 1], "<|/code_to_edit|>"] + lines[last + 1 :]
        diff = EDIT_DIFF if rng.random() < 0.7 else ""
        content = (f"<|current_file_content|>\n{FILE_LINE}" + "\n".join(marked) + "\n<|/current_file_content|>\n\n"
                   f"<|edit_diff_history|>\n{diff}<|/edit_diff_history|>\n")
        return {"model": "mercury-coder", "stream": rng.random() < 0.5, "temperature": 0.0,
                "messages": [{"role": "system", "content": "You are Mercury."}, {"role": "user", "content": content}]}

    def tabby_edit(self) -> dict[str, Any]:
        """Tabby's next-edit request after the same edit: the file before and after it, and its diff."""
        history = {"original_code": PREFIX.replace("result = 0", "result = 1") + SUFFIX, "edits_diff": EDIT_DIFF,
                   "current_version": PREFIX + SUFFIX}
        return {"language": "python", "mode": "next_edit_suggestion", "seed": self.rng.randint(0, 9),
                "segments": {"prefix": PREFIX, "suffix": SUFFIX, "filepath": "a.py", "edit_history": history}}


def into_file(body: dict[str, Any], shape: str, text: str, both: bool) -> str:
    """Put `text` (whole lines) at the top of the file of a next-edit body (`mercury_edit`, `tabby_edit`), the
    edit's diff and the cursor moved down with it: a huge file whose edit still matches, so the server runs
    the whole next-edit path on it. `both`: Tabby's `original_code` starts with the lines too (a small edit
    of a huge file; else the two versions differ by them). Returns the field's path."""
    lines = text.count("\n")

    def moved(diff: str) -> str:
        return re.sub(r"@@ -(\d+),1 \+(\d+),1 @@", lambda m: f"@@ -{int(m[1]) + lines},1 +{int(m[2]) + lines},1 @@", diff)

    if shape == "mercury_edit":
        message = body["messages"][1]
        message["content"] = moved(message["content"].replace(FILE_LINE, FILE_LINE + text, 1))
        return "messages.1.content"
    segments = body["segments"]
    history = segments["edit_history"]
    history["current_version"] = text + history["current_version"]
    segments["prefix"] = text + segments["prefix"]
    if both:
        history["original_code"] = text + history["original_code"]
        history["edits_diff"] = moved(history["edits_diff"])
    return "segments.edit_history.current_version"


def leaf_paths(value: Any, prefix: str = "") -> list[str]:
    """Dotted paths of every field, list item and nested field."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    paths = []
    for key, child in items:
        path = f"{prefix}{key}"
        paths.append(path)
        paths += leaf_paths(child, path + ".")
    return paths


def get(body: Any, path: str) -> Any:
    for key in path.split("."):
        body = body[int(key)] if isinstance(body, list) else body.get(key) if isinstance(body, dict) else None
    return body


def put(body: Any, path: str, value: Any) -> None:
    """Set the field at a dotted path, making the objects on the way; a list index past the end appends."""
    keys = path.split(".")
    for key in keys[:-1]:
        if isinstance(body, list):
            if int(key) >= len(body):
                body.append({})
            body = body[min(int(key), len(body) - 1)]
        else:
            body = body.setdefault(key, {})
    last = keys[-1]
    if isinstance(body, list):
        if int(last) >= len(body):
            body.append(value)
        else:
            body[int(last)] = value
    else:
        body[last] = value
