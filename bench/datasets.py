"""Load the infilling benchmarks from the evaluation data (bench/data; never training data).

Every task becomes the same shape: a document `prefix + suffix` with the cursor at `len(prefix)`, and the
canonical `middle` that belongs there. bench/data holds copies of HumanEval-infilling (single- and
multi-line, MIT) and SantaCoder-FIM (BSD-3 with a clause that forbids training on it), each with its
licence; provenance and checksums: bench/data/MANIFEST.json.
"""
from __future__ import annotations

import gzip
import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

DATA_ENV = "DCOMPLETE_BENCH_DATA"
HUMANEVAL_FILES = {
    "single": "human-eval-infilling/HumanEval-SingleLineInfilling.jsonl.gz",
    "multi": "human-eval-infilling/HumanEval-MultiLineInfilling.jsonl.gz",
}
SANTACODER_FILE = "santacoder-fim/santacoder-fim-task.jsonl.gz"


@dataclass(frozen=True)
class InfillTask:
    """One gap. `test`/`entry_point` are set for executable (HumanEval-infilling) tasks only."""

    task_id: str
    prefix: str
    suffix: str
    middle: str
    test: str = ""
    entry_point: str = ""
    language: str = "python"

    @property
    def document(self) -> str:
        return self.prefix + self.suffix

    @property
    def cursor(self) -> int:
        return len(self.prefix)


class DataError(RuntimeError):
    pass


BUNDLED_DATA = Path(__file__).resolve().parent / "data"


def data_root() -> Path:
    """$DCOMPLETE_BENCH_DATA, else the copies in bench/data."""
    return Path(os.environ[DATA_ENV]) if os.environ.get(DATA_ENV) else BUNDLED_DATA


def _read_jsonl_gz(path: Path) -> list[dict]:
    if not path.is_file():
        raise DataError(f"benchmark file missing: {path}")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_humaneval(split: str, root: Path | None = None) -> list[InfillTask]:
    """HumanEval-infilling single- or multi-line: prompt is the prefix, canonical_solution the middle.

    In these splits every prefix and every middle ends with a newline, so the cursor sits at the start of
    the line that follows the gap and the middle is whole lines.
    """
    if split not in HUMANEVAL_FILES:
        raise DataError(f"unknown HumanEval-infilling split {split!r}; choose from {sorted(HUMANEVAL_FILES)}")
    rows = _read_jsonl_gz((root or data_root()) / HUMANEVAL_FILES[split])
    return [InfillTask(task_id=row["task_id"], prefix=row["prompt"], suffix=row["suffix"],
                       middle=row["canonical_solution"], test=row["test"], entry_point=row["entry_point"])
            for row in rows]


SANTACODER_LANGUAGES = {"py": "python", "js": "javascript", "java": "java"}
"""SantaCoder-FIM's language codes (1,043 Python, 1,969 JavaScript, 1,780 Java rows) -> infill language ids."""


def load_santacoder_py(root: Path | None = None) -> list[InfillTask]:
    return load_santacoder("py", root)


def load_santacoder(language: str, root: Path | None = None) -> list[InfillTask]:
    """SantaCoder-FIM, the rows of one language (`py`, `js` or `java`; `SANTACODER_LANGUAGES`).

    The stored prompt mostly lacks its trailing newline and the middle is one line without one. Following
    Open-dLLM (`eval/eval_infill/eval_infill.py`, santacoder-fim branch:
    `prefixs = [d["prompt"] + "\\n" ...]`) and the DreamOn setup it reproduces (research/benchmarks.md
    §1.2), the prefix is `prompt + "\\n"` and the
    suffix is kept as stored, so the gap must also produce the line break that ends the middle. The
    JavaScript and Java rows have the same shape (prompt without its final line break, a one-line middle),
    so they are read the same way; the whole file is `prefix + middle + "\n" + suffix`.
    """
    if language not in SANTACODER_LANGUAGES:
        raise DataError(f"unknown SantaCoder-FIM language {language!r}; choose from {sorted(SANTACODER_LANGUAGES)}")
    rows = _read_jsonl_gz((root or data_root()) / SANTACODER_FILE)
    return [InfillTask(task_id=row["name"], prefix=row["prompt"] + "\n", suffix=row["suffix"],
                       middle=row["canonical_solution"], language=SANTACODER_LANGUAGES[language])
            for row in rows if row["language"] == language]


T = TypeVar("T")


def fixed_subset(items: Sequence[T], size: int | None, seed: int) -> list[T]:
    """`size` items drawn with `random.Random(seed)`, kept in dataset order; all items when size is None or
    not smaller than the set. A seeded sample, not the first N: the first N of a split cover only the first
    few HumanEval problems, each of which contributes dozens of consecutive tasks.
    """
    if size is None or size >= len(items):
        return list(items)
    if size < 0:
        raise DataError(f"subset size must be >= 0, got {size}")
    chosen = sorted(random.Random(seed).sample(range(len(items)), size))
    return [items[index] for index in chosen]
