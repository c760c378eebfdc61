"""Build bench/data/next_edit: next-edit tasks cut from the diffs between consecutive releases on PyPI.

    python -m bench.next_edit_data build [--sdists DIR] [--seed 0]

For each package of `RELEASES` (a chain of consecutive releases, none a pre-release), every sdist is fetched
with `pip download --no-deps --no-binary :all: NAME==VERSION` (into --sdists, kept there; by default a
temporary folder), its sha256 checked against MANIFEST.json when that already lists it, its licence read
from PKG-INFO (`training.sdist.licence_family`; no permissive family: the build stops). Only the package's
own .py files count: tests, examples, docs, scripts, tools and benchmarks are left out (as in
bench.repo_context_data).

A file changed between releases N and N+1, under MAX_LINES lines at N, is split into line hunks
(bench.next_edit_tasks.hunks). A hunk may be the user's edit or a target when it has at most MAX_CHANGED
changed lines (old + new), changes some token (not layout only), is one edit rather than a rewrite (`usable`)
and is not the release's version bump.
- related: the user's hunk U and, as the expected next edit, the nearest other hunk T of the same file and
  release that makes a token-level change U makes too (`same_change`: the same old name replaced by the same
  new name, the same literal rewritten, the same argument added or dropped). The other hunks of the file are
  not applied: `current` is the file at N with U applied, `expected` is `current` with T applied too. The
  remaining hunks that share a change with U are kept as `alternatives` (equally right next edits).
- noise: a file whose only change in the release is U; the right answer is no suggestion.
Each package gives at most RELATED_PER_PACKAGE related and NOISE_PER_PACKAGE noise tasks, each file of a
release at most PER_FILE related ones, chosen with a seeded shuffle. The archive keeps each task's file at
release N and the licence files (xz: the same file at several releases costs little).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from bench.next_edit_tasks import (
    ARCHIVE,
    DATA,
    TASKS,
    Change,
    Hunk,
    cursor_line,
    hunk_row,
    hunks,
    same_change,
    tokens,
)
from bench.repo_context_data import SKIPPED_FILES, licence_files
from bench.repo_sources import pack
from training.sdist import SdistInfo, canonical_name, licence_family, read_sdist

REPO = Path(__file__).resolve().parents[1]
DESCRIPTION = ("Next-edit tasks for bench.next_edit from the diffs between consecutive releases of permissive "
               "pure-Python packages on PyPI that the training corpus never saw: tasks.jsonl (one task a line; "
               "hunks as 1-based lines, file texts under `file` in sources.tar.xz), sources.tar.xz (each task's "
               "file at release N and the licence files of every release used).")
MANIFEST = DATA / "MANIFEST.json"
MAX_LINES = 600
MAX_CHANGED = 12
MIN_KEPT = 0.5
PER_FILE = 3
RELATED_PER_PACKAGE = 40
NOISE_PER_PACKAGE = 10
SKIPPED = re.compile(r"(^|/)(tests?|testing|examples?|docs?|docs_src|scripts|tools|benchmarks?)(/|$)|(^|/)test_[^/]*$")

RELEASES: dict[str, tuple[str, ...]] = {
    "advanced-alchemy": ("1.8.0", "1.8.1", "1.8.2", "1.9.0", "1.9.1", "1.9.2", "1.9.3", "1.10.0"),
    "alembic": ("1.17.0", "1.17.1", "1.17.2", "1.18.0", "1.18.1", "1.18.2", "1.18.3", "1.18.4", "1.18.5",
                "1.19.0", "1.19.1"),
    "litestar": ("2.17.0", "2.18.0", "2.19.0", "2.20.0", "2.21.0", "2.21.1", "2.22.0", "2.23.0", "2.24.0",
                 "2.25.0"),
    "mcp": ("1.25.0", "1.26.0", "1.27.0", "1.27.1", "1.27.2", "1.28.0", "1.28.1", "1.29.0", "1.29.1"),
    "pdm": ("2.26.3", "2.26.4", "2.26.5", "2.26.6", "2.26.7", "2.26.8", "2.26.9", "2.27.0", "2.28.0", "2.28.1"),
    "polyfactory": ("2.22.2", "2.22.3", "2.22.4", "2.22.5", "3.0.0"),
    "structlog": ("24.4.0", "25.1.0", "25.2.0", "25.3.0", "25.4.0", "25.5.0", "26.1.0"),
    "uvicorn": ("0.46.0", "0.47.0", "0.48.0", "0.49.0", "0.50.0", "0.50.1", "0.50.2", "0.51.0", "0.52.0",
                "0.52.1"),
}
"""Consecutive releases per package (adjacent in `pip index versions NAME` when chosen)."""


@dataclass(frozen=True)
class Candidate:
    package: str
    version_from: str
    version_to: str
    path: str
    text: str = field(repr=False, compare=False)
    user: Hunk
    target: Hunk | None = None
    alternatives: tuple[Hunk, ...] = ()
    relation: Change | None = None

    @property
    def id(self) -> str:
        return f"{self.package}-{self.version_from}/{self.path}:{self.user.start}"

    @property
    def file(self) -> str:
        return f"{self.package}-{self.version_from}/{self.path}"


@dataclass
class Release:
    info: SdistInfo
    sdist: Path
    files: dict[str, str] = field(default_factory=dict)


def fetch(name: str, version: str, folder: Path) -> Path:
    """The sdist of NAME==VERSION in `folder`, downloaded by pip unless it is there already."""
    def present() -> list[Path]:
        return [p for p in folder.iterdir() if p.name.endswith((".tar.gz", ".zip"))
                and canonical_name(p.name.rsplit("-", 1)[0]) == name and _version_of(p) == version]

    found = present()
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        f"{name}=={version}", "-d", str(folder)], check=True)
        found = present()
    if len(found) != 1:
        raise RuntimeError(f"{name}=={version}: expected one sdist in {folder}, found {found}")
    return found[0]


def _version_of(sdist: Path) -> str:
    return sdist.name.rsplit("-", 1)[1].removesuffix(".tar.gz").removesuffix(".zip")


def own_files(info: SdistInfo) -> dict[str, str]:
    """The package's own .py files: no tests, examples, docs, scripts, benchmarks or build scripts."""
    return {path: text for path, text in info.python_files
            if not SKIPPED.search(path) and PurePosixPath(path).name not in SKIPPED_FILES}


def usable(hunk: Hunk, version: str) -> bool:
    """Small enough for a fill-in model, a change of tokens, one edit rather than a rewrite, and not the
    release's version bump. A rewrite is a hunk that replaces lines by mostly other tokens (under
    MIN_KEPT of them shared, `difflib` ratio): there the line diff pairs unrelated old and new lines, and
    a token the two happen to share is no intent."""
    old, new = "\n".join(hunk.old), "\n".join(hunk.new)
    a, b = tokens(old), tokens(new)
    if hunk.size > MAX_CHANGED or a == b or version in old:
        return False
    return not (a and b) or difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= MIN_KEPT


def file_candidates(package: str, old: Release, new: Release, path: str) -> list[Candidate]:
    """The related and noise candidates of one file changed between two releases."""
    before, after = old.files[path].split("\n"), new.files[path].split("\n")
    if len(before) > MAX_LINES:
        return []
    found = hunks(before, after)
    small = [h for h in found if usable(h, old.info.version)]
    base = (package, old.info.version, new.info.version, path, old.files[path])
    if len(found) == 1:
        return [Candidate(*base, small[0])] if small else []
    out = []
    for user in small:
        shared = [(t, change) for t in small if t != user for change in [same_change(user, t)] if change]
        if not shared:
            continue
        shared.sort(key=lambda item: (abs(item[0].start - user.start), item[0].start < user.start))
        delta = len(user.new) - len(user.old)
        placed = [t.shifted(delta) if t.start > user.start else t for t, _ in shared]
        out.append(Candidate(*base, user, placed[0], tuple(placed[1:]), shared[0][1]))
    return out


def choose(candidates: list[Candidate], seed: int, package: str) -> list[Candidate]:
    """Up to the package's caps, at most PER_FILE related tasks per file and release, seeded."""
    rng = random.Random(f"{seed}/{package}")
    pool = list(candidates)
    rng.shuffle(pool)
    chosen: list[Candidate] = []
    per_file: Counter[str] = Counter()
    related = noise = 0
    for cand in pool:
        if cand.target is None and noise < NOISE_PER_PACKAGE:
            noise += 1
            chosen.append(cand)
        elif cand.target is not None and related < RELATED_PER_PACKAGE and per_file[cand.file] < PER_FILE:
            related += 1
            per_file[cand.file] += 1
            chosen.append(cand)
    return sorted(chosen, key=lambda c: (_version_key(c.version_from), c.path, c.user.start))


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def task_row(cand: Candidate) -> dict[str, Any]:
    """The tasks.jsonl row of a candidate (file texts stay in the archive, under `file`)."""
    lines = len(cand.user.apply(cand.text.split("\n")))
    row: dict[str, Any] = {
        "id": cand.id, "package": cand.package, "version_from": cand.version_from,
        "version_to": cand.version_to, "path": cand.path, "language": "python",
        "kind": "related" if cand.target else "noise", "file": cand.file,
        "user_edit": hunk_row(cand.user), "target": hunk_row(cand.target) if cand.target else None,
        "cursor_line": cursor_line(cand.user, lines),
        "alternatives": [hunk_row(h) for h in cand.alternatives],
        "relation": ({"removed": list(cand.relation.removed), "added": list(cand.relation.added),
                      "anchor": cand.relation.anchor} if cand.relation else None),
    }
    return row


def exclusions(names: list[str]) -> dict[str, Any]:
    """The packages must be new to the training corpus and to bench.repo_context's set."""
    corpus = json.loads((REPO / "training" / "corpus_manifest.json").read_text(encoding="utf-8"))
    repo_context = json.loads((REPO / "bench" / "data" / "repo_context" / "MANIFEST.json").read_text("utf-8"))
    taken = {"training/corpus_manifest.json packages[].name": {canonical_name(p["name"]) for p in corpus["packages"]},
             "bench/data/repo_context/MANIFEST.json packages[].name":
                 {canonical_name(p["name"]) for p in repo_context["packages"]}}
    clashes = {where: sorted(set(names) & seen) for where, seen in taken.items()}
    if any(clashes.values()):
        raise ValueError(f"packages already used elsewhere: {clashes}")
    return {where: {"checked": len(seen), "in_common": []} for where, seen in taken.items()}


def build(sdists: Path, seed: int) -> dict[str, Any]:
    """Fetch, diff and choose; write sources.tar.xz and tasks.jsonl; the new MANIFEST.json."""
    known = _known_sha256()
    entries: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    texts: dict[str, bytes] = {}
    check = exclusions(sorted(RELEASES))
    for name, versions in RELEASES.items():
        releases = [_release(name, v, sdists, known) for v in versions]
        family = licence_family(releases[-1].info.licence_fields)
        if family is None or any(licence_family(r.info.licence_fields) != family for r in releases):
            raise ValueError(f"{name}: no permissive licence in every release's PKG-INFO")
        candidates: list[Candidate] = []
        pairs = []
        for old, new in zip(releases, releases[1:]):
            changed = sorted(p for p in old.files if p in new.files and old.files[p] != new.files[p])
            found = [c for path in changed for c in file_candidates(name, old, new, path)]
            candidates += found
            pairs.append({"from": old.info.version, "to": new.info.version, "files_changed": len(changed),
                          "related_candidates": sum(c.target is not None for c in found),
                          "noise_candidates": sum(c.target is None for c in found)})
        chosen = choose(candidates, seed, name)
        rows += [task_row(c) for c in chosen]
        texts.update({c.file: c.text.encode("utf-8") for c in chosen})
        licence_names = []
        for release in releases:
            for member, data in licence_files(release.sdist):
                texts[f"{name}-{release.info.version}/{member}"] = data
                licence_names.append(member)
        entries.append({
            "name": name, "licence": family, "licence_fields": list(releases[-1].info.licence_fields),
            "licence_files": sorted(set(licence_names)),
            "releases": [{"version": r.info.version, "sdist": r.sdist.name,
                          "sdist_sha256": _sha256(r.sdist)} for r in releases],
            "pairs": pairs, "related": sum(c.target is not None for c in chosen),
            "noise": sum(c.target is None for c in chosen),
            "in_training_corpus": False, "in_repo_context": False})
    _write_archive(texts)
    TASKS.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return {
        "description": DESCRIPTION,
        "how_built": __doc__.split("\n\n", 2)[2].strip(),
        "command": f"python -m bench.next_edit_data build --seed {seed}",
        "seed": seed, "max_lines": MAX_LINES, "max_changed_lines": MAX_CHANGED, "per_file": PER_FILE,
        "related_per_package": RELATED_PER_PACKAGE, "noise_per_package": NOISE_PER_PACKAGE,
        "tasks": len(rows), "related": sum(r["kind"] == "related" for r in rows),
        "noise": sum(r["kind"] == "noise" for r in rows), "exclusions": check, "packages": entries}


def _release(name: str, version: str, folder: Path, known: dict[str, str]) -> Release:
    sdist = fetch(name, version, folder)
    digest = _sha256(sdist)
    if sdist.name in known and known[sdist.name] != digest:
        raise ValueError(f"{sdist.name}: sha256 {digest} differs from MANIFEST.json's {known[sdist.name]}")
    info = read_sdist(sdist)
    if canonical_name(info.name) != name or info.version != version:
        raise ValueError(f"{sdist.name}: PKG-INFO says {info.name} {info.version}")
    return Release(info, sdist, own_files(info))


def _known_sha256() -> dict[str, str]:
    if not MANIFEST.is_file():
        return {}
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return {r["sdist"]: r["sdist_sha256"] for p in manifest["packages"] for r in p["releases"]}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_archive(files: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as work:
        for path, data in files.items():
            target = Path(work) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        pack(Path(work), ARCHIVE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.next_edit_data", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    building = sub.add_parser("build", help="fetch the sdists and rewrite bench/data/next_edit")
    building.add_argument("--sdists", type=Path, default=None, help="keep the sdists here (default: a temporary folder)")
    building.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.sdists or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            manifest = build(folder, args.seed)
        except (subprocess.CalledProcessError, RuntimeError, ValueError) as error:
            print(f"bench.next_edit_data: {error}", file=sys.stderr)
            return 2
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"{manifest['tasks']} tasks ({manifest['related']} related, {manifest['noise']} noise): "
          f"{({p['name']: p['related'] + p['noise'] for p in manifest['packages']})}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
