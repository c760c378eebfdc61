"""Keep evaluation problems out of the training corpus.

The evaluation sets are read only to build fingerprints; no text from them is ever written anywhere:
HumanEval single- and multi-line infilling, SantaCoder-FIM in every language it has (Python, JavaScript,
Java: HumanEval translated), the files of bench.repo_context's packages and the files of the next-edit
benchmark's packages (bench/data/*/sources.tar.*). A corpus file is dropped when it shares any run of three
consecutive non-trivial lines with one of them, or when it defines a function named like a HumanEval entry
point whose docstring opens with the same line as the reference docstring; a package named like one of
those benchmarks' packages is dropped whole (`EvalFingerprints.packages`).
"""

from __future__ import annotations

import gzip
import json
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

EVAL_DATA = Path(__file__).resolve().parents[1] / "bench" / "data"
HUMANEVAL_FILES = tuple(EVAL_DATA / "human-eval-infilling" / f"HumanEval-{kind}LineInfilling.jsonl.gz"
                        for kind in ("Single", "Multi"))
SANTACODER_FILE = EVAL_DATA / "santacoder-fim" / "santacoder-fim-task.jsonl.gz"
PACKAGE_ARCHIVES = (EVAL_DATA / "repo_context" / "sources.tar.gz", EVAL_DATA / "next_edit" / "sources.tar.xz")
PACKAGE_MANIFESTS = (EVAL_DATA / "repo_context" / "MANIFEST.json", EVAL_DATA / "next_edit" / "MANIFEST.json")
WINDOW = 3
MIN_LINE_CHARS = 12
_TRIVIAL = re.compile(r"^(return|pass|else:|try:|finally:|break|continue|\)|\]|\}|#.*|//.*|/\*.*|\*.*|\"\"\"|''')$")
_DEF = re.compile(r"^\s*def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _normal(line: str) -> str:
    return " ".join(line.split())


def _is_trivial(line: str) -> bool:
    return len(line) < MIN_LINE_CHARS or bool(_TRIVIAL.match(line))


def line_windows(text: str) -> set[tuple[str, ...]]:
    """Every run of WINDOW consecutive non-trivial lines (whitespace-normalised, blank lines skipped)."""
    lines = [n for n in (_normal(raw) for raw in text.splitlines()) if n]
    out: set[tuple[str, ...]] = set()
    for i in range(len(lines) - WINDOW + 1):
        window = tuple(lines[i : i + WINDOW])
        if not any(_is_trivial(line) for line in window):
            out.add(window)
    return out


def _first_docstring_line(lines: list[str], def_index: int) -> str | None:
    opened = False
    for raw in lines[def_index + 1 : def_index + 12]:
        text = raw.strip()
        if not text:
            continue
        if opened:
            return _normal(text)
        for quote in ('"""', "'''"):
            if text.startswith(quote):
                rest = text[len(quote) :].strip().rstrip(quote).strip()
                if rest:
                    return _normal(rest)
                opened = True
        if not opened and (not text.endswith(":") or "def " in text):
            return None
    return None


def signature_docstrings(text: str) -> set[tuple[str, str]]:
    """(function name, first docstring line) for each def in text that has a one-line-opened docstring."""
    lines = text.splitlines()
    out: set[tuple[str, str]] = set()
    for index, line in enumerate(lines):
        match = _DEF.match(line)
        if match:
            doc = _first_docstring_line(lines, index)
            if doc:
                out.add((match.group(1), doc))
    return out


def _solutions() -> list[str]:
    texts: set[str] = set()
    for path in HUMANEVAL_FILES:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for row in map(json.loads, handle):
                texts.add(row["prompt"] + row["canonical_solution"] + row["suffix"])
    if SANTACODER_FILE.exists():
        with gzip.open(SANTACODER_FILE, "rt", encoding="utf-8") as handle:
            for row in map(json.loads, handle):
                texts.add(row["prompt"] + row["canonical_solution"] + row["suffix"])
    return sorted(texts)


def _package_files() -> list[str]:
    """The source files of the benchmarks' vendored packages."""
    texts = []
    for archive in PACKAGE_ARCHIVES:
        if not archive.exists():
            continue
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                handle = tf.extractfile(member) if member.isfile() and member.name.endswith(".py") else None
                if handle is not None:
                    texts.append(handle.read().decode("utf-8", "replace"))
    return texts


def _package_names() -> frozenset[str]:
    names: set[str] = set()
    for manifest in PACKAGE_MANIFESTS:
        if manifest.exists():
            names |= {p["name"] for p in json.loads(manifest.read_text(encoding="utf-8"))["packages"]}
    return frozenset(names)


@dataclass(frozen=True)
class EvalFingerprints:
    windows: frozenset[tuple[str, ...]]
    signatures: frozenset[tuple[str, str]]
    problems: int
    packages: frozenset[str] = frozenset()
    package_files: int = 0

    @classmethod
    def load(cls) -> EvalFingerprints:
        windows: set[tuple[str, ...]] = set()
        signatures: set[tuple[str, str]] = set()
        texts = _solutions()
        for text in texts:
            windows |= line_windows(text)
            signatures |= signature_docstrings(text)
        files = _package_files()
        for text in files:
            windows |= line_windows(text)
        return cls(frozenset(windows), frozenset(signatures), len(texts), _package_names(), len(files))

    def contamination(self, text: str) -> str | None:
        """Why text must be dropped, or None when it shares nothing long with an evaluation problem."""
        shared = line_windows(text) & self.windows
        if shared:
            return "shares 3 consecutive lines with an evaluation solution: " + " / ".join(next(iter(shared)))
        sigs = signature_docstrings(text) & self.signatures
        if sigs:
            name, _ = next(iter(sigs))
            return f"defines evaluation entry point {name} with the same docstring"
        return None
