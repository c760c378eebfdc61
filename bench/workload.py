"""Benchmark workloads: infill spots cut from real Python files that are not in the training corpus.

The files come from installed packages the corpus never saw (pygls, lsprotocol, transformers' generation
code; training/packages.txt lists what the corpus holds). A spot is a run of whole lines inside a
function body whose token count is close to the requested span length; its masks number exactly the
tokens it replaces (oracle length), so every mode fills the same number of positions.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infill.canvas import canvas_for, encode
from infill.spots import Spot

SOURCE_PACKAGES = ("pygls", "lsprotocol", "transformers.generation")


@dataclass(frozen=True)
class Case:
    path: str
    text: str
    spot: Spot
    truth: list[int]  # the tokens the spot replaced
    canvas: list[int]


def source_files(limit: int = 40) -> list[Path]:
    files: list[Path] = []
    for name in SOURCE_PACKAGES:
        package = importlib.import_module(name)
        root = Path(package.__file__).parent  # type: ignore[arg-type]
        files += sorted(p for p in root.rglob("*.py") if p.stat().st_size > 4000)
    return files[:limit]


def package_versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("pygls", "lsprotocol", "transformers")}


def _body_line_starts(text: str) -> list[int]:
    """Offsets of lines indented 8+ spaces that hold code (inside methods/nested blocks)."""
    starts, offset = [], 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if line.startswith(" " * 8) and len(stripped) > 8 and not stripped.startswith(("#", '"', "'")):
            starts.append(offset)
        offset += len(line)
    return starts


def cases(engine: Any, span_tokens: int, count: int, context: int | None = None, lines: int | None = None) -> list[Case]:
    """`count` cases whose spans hold about `span_tokens` tokens (or exactly `lines` whole lines)."""
    tok = engine.tokenizer
    budget = min(context or engine.max_length, engine.max_length)
    out: list[Case] = []
    for path in source_files():
        text = path.read_text(encoding="utf-8")
        starts = _body_line_starts(text)
        for start in starts[len(starts) // 3 :: 7]:
            end, n_lines = start, 0
            while end < len(text):
                nl = text.find("\n", end)
                end = len(text) if nl < 0 else nl + 1
                n_lines += 1
                truth = encode(tok, text[start:end])
                if (lines is not None and n_lines >= lines) or (lines is None and len(truth) >= span_tokens * 0.8):
                    break
            truth = encode(tok, text[start:end])
            if lines is None and not span_tokens * 0.8 <= len(truth) <= span_tokens * 1.25:
                continue
            spot = Spot(start, end, len(truth), "line" if n_lines == 1 else "block")
            canvas = canvas_for(engine, text, [spot], budget)
            out.append(Case(str(path), text, spot, truth, list(canvas.ids)))
            break
        if len(out) >= count:
            break
    return out
