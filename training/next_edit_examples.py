"""Next-edit training examples, cut from consecutive PyPI releases of corpus packages the way
bench.next_edit_data cuts the benchmark's tasks (its fetch, file filter and hunk pairing are reused here),
from packages other than the benchmark's.

    python -m training.next_edit_examples       # -> corpus_cache/next_edit/{train,val}.jsonl

For a related pair of hunks (the user's edit U, and T, the nearest other hunk of the same file and release
that makes a change U makes too): the document is the file at release N with U applied; the header is the
edit history `infill.next_edit.header.history_header` writes for U; the regions are those
`infill.next_edit.candidates.regions` ranks after U. The region that holds T is a gap whose answer is the
text with T applied; up to two regions above it are gaps whose answer is their current text (the places
where nothing changes). Files at 10 % of (package, path) hashes are held out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.next_edit_data import Release, fetch, file_candidates, own_files
from infill.languages import get_language
from infill.next_edit.candidates import regions
from infill.next_edit.edits import edit_between
from infill.next_edit.header import history_header
from training.gaps import Gap, right_length
from training.sdist import read_sdist

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "corpus_cache" / "next_edit"
BENCH_MANIFEST = REPO / "bench" / "data" / "next_edit" / "MANIFEST.json"
HISTORY_TOKENS = 256
NEGATIVES = 2
RELEASES: dict[str, tuple[str, ...]] = {
    "click": ("8.1.3", "8.1.4", "8.1.5", "8.1.6", "8.1.7", "8.1.8", "8.2.0"),
    "attrs": ("23.1.0", "23.2.0", "24.1.0", "24.2.0", "24.3.0"),
    "packaging": ("23.0", "23.1", "23.2", "24.0", "24.1", "24.2"),
    "werkzeug": ("3.0.0", "3.0.1", "3.0.2", "3.0.3", "3.0.4", "3.0.5", "3.0.6", "3.1.0"),
    "flask": ("3.0.0", "3.0.1", "3.0.2", "3.0.3", "3.1.0"),
    "pyparsing": ("3.1.0", "3.1.1", "3.1.2", "3.1.3", "3.1.4", "3.2.0"),
    "more-itertools": ("10.1.0", "10.2.0", "10.3.0", "10.4.0", "10.5.0"),
    "urllib3": ("2.1.0", "2.2.0", "2.2.1", "2.2.2", "2.2.3"),
    "httpx": ("0.25.0", "0.25.1", "0.25.2", "0.26.0", "0.27.0"),
    "anyio": ("4.3.0", "4.4.0", "4.5.0", "4.6.0", "4.7.0"),
    "marshmallow": ("3.20.1", "3.20.2", "3.21.0", "3.21.1", "3.22.0", "3.23.0"),
    "rich": ("13.6.0", "13.7.0", "13.7.1", "13.8.0", "13.8.1", "13.9.0"),
    "black": ("24.1.0", "24.1.1", "24.2.0", "24.3.0", "24.4.0"),
    "tomlkit": ("0.12.0", "0.12.1", "0.12.2", "0.12.3", "0.12.4", "0.12.5", "0.13.0"),
    "humanize": ("4.7.0", "4.8.0", "4.9.0", "4.10.0", "4.11.0"),
    "jsonschema": ("4.19.0", "4.19.1", "4.19.2", "4.20.0", "4.21.0", "4.22.0", "4.23.0"),
}
"""Consecutive releases (adjacent in `pip index versions NAME`) of packages in training/packages.txt."""


@dataclass(frozen=True)
class EditExample:
    package: str
    path: str
    versions: str
    header: str
    current: str
    gaps: tuple[tuple[int, int, str], ...]  # (start, end, answer) in `current`, top to bottom; the last holds T


def examples_of(package: str, old: Release, new: Release, path: str, tokenizer: Any) -> list[EditExample]:
    spec = get_language("python")
    out = []
    for cand in file_candidates(package, old, new, path):
        if cand.target is None or not cand.target.old:
            continue
        before = cand.text
        current_lines = cand.user.apply(before.split("\n"))
        current = "\n".join(current_lines)
        expected = "\n".join(cand.target.apply(current_lines))
        edit = edit_between(f"file:///{path}", before, current)
        if edit is None:
            continue
        lo, hi = cand.target.start - 1, cand.target.end - 1
        found = regions(edit, current, spec)
        hit = next((r for r in found if r.first <= hi and lo <= r.last), None)
        if hit is None:
            continue
        suffix = current[hit.end :]
        if not (expected.startswith(current[: hit.start]) and expected.endswith(suffix)):
            continue
        answer = expected[hit.start : len(expected) - len(suffix)]
        above = [r for r in found if r.end <= hit.start and r.last < lo][:NEGATIVES]
        gaps = [(r.start, r.end, current[r.start : r.end]) for r in sorted(above, key=lambda r: r.start)]
        header = history_header([edit], spec.comment_prefix, tokenizer, HISTORY_TOKENS)
        out.append(EditExample(package, path, f"{old.info.version}->{new.info.version}", header, current,
                               (*gaps, (hit.start, hit.end, answer))))
    return out


def edit_window(example: EditExample, tokenizer: Any, eos: int, width: int,
                rng: random.Random) -> tuple[np.ndarray, list[Gap], int]:
    """(ids, gaps, header tokens): end-of-text, the history header, the document from a line start to the
    end of the last gap's answer (at most `width` tokens of document), tokenized piece by piece at the gaps'
    edges as a canvas is; each gap's right context is the current text after it."""
    def encode(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False)) if text else []

    header = encode(example.header)
    last_start, last_end, last_answer = example.gaps[-1]
    budget = width - len(encode(last_answer)) - 1
    start = last_start
    while start > 0:
        previous = example.current.rfind("\n", 0, start - 1) + 1
        if len(encode(example.current[previous:last_start])) > budget:
            break
        start = previous
    ids: list[int] = [eos, *header]
    gaps: list[Gap] = []
    cursor = start
    for gap_start, gap_end, answer in example.gaps:
        if gap_start < start:
            continue
        ids += encode(example.current[cursor:gap_start])
        a = len(ids)
        ids += encode(answer)
        if len(ids) > a:
            right = np.asarray(encode(example.current[gap_end:])[: right_length(rng)], dtype=np.int64)
            gaps.append(Gap(a, len(ids), right, "next_edit"))
        cursor = gap_end
    return np.asarray(ids, dtype=np.int64), gaps, len(header)


def load(split: str, folder: Path = OUT) -> list[EditExample]:
    path = folder / f"{split}.jsonl"
    if not path.is_file():
        return []
    return [EditExample(**{**row, "gaps": tuple(tuple(g) for g in row["gaps"])})
            for row in map(json.loads, path.open(encoding="utf-8"))]


def build(sdists: Path, tokenizer: Any) -> dict[str, Any]:
    benchmark = {p["name"] for p in json.loads(BENCH_MANIFEST.read_text())["packages"]}
    if benchmark & set(RELEASES):
        raise SystemExit(f"next-edit training packages overlap the benchmark's: {sorted(benchmark & set(RELEASES))}")
    OUT.mkdir(parents=True, exist_ok=True)
    splits: dict[str, list[EditExample]] = {"train": [], "val": []}
    counts: dict[str, int] = {}
    for name, versions in RELEASES.items():
        releases = []
        for version in versions:
            try:
                sdist = fetch(name, version, sdists)
            except Exception as error:  # a release pip cannot fetch is left out, the chain goes on
                print(f"  {name}=={version}: {error}", file=sys.stderr)
                continue
            info = read_sdist(sdist)
            releases.append(Release(info, sdist, own_files(info)))
        found = []
        for old, new in zip(releases, releases[1:]):
            for path in sorted(p for p in old.files if p in new.files and old.files[p] != new.files[p]):
                found += examples_of(name, old, new, path, tokenizer)
        counts[name] = len(found)
        for example in found:
            held = int(hashlib.sha256(f"{name}/{example.path}".encode()).hexdigest()[:8], 16) % 10 == 0
            splits["val" if held else "train"].append(example)
        print(f"{name}: {len(found)} examples", flush=True)
    for split, rows in splits.items():
        (OUT / f"{split}.jsonl").write_text("".join(json.dumps(asdict(r)) + "\n" for r in rows), encoding="utf-8")
    return {"packages": counts, "train": len(splits["train"]), "val": len(splits["val"])}


def main(argv: list[str] | None = None) -> None:
    from training.run_folder import BASE, tokenizer_of

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdists", type=Path, default=REPO / "corpus_cache" / "release_sdists")
    args = parser.parse_args(argv)
    args.sdists.mkdir(parents=True, exist_ok=True)
    print(json.dumps(build(args.sdists, tokenizer_of(BASE))))


if __name__ == "__main__":
    main()
