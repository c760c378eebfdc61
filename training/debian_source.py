"""C, C++, Go, Rust and Java sources from Debian bookworm source packages, each file kept only under a
permissive licence by the package's machine-readable debian/copyright.

Downloads go through a private apt configuration (its own sources list with a `deb-src` line, lists and
cache under corpus_cache/apt), so the machine's apt setup is never changed.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from training.licences import permissive

MIRROR = "deb-src http://deb.debian.org/debian bookworm main"
LANGUAGES = {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
             ".hxx": "cpp", ".go": "go", ".rs": "rust", ".java": "java"}
SKIP_DIRS = {"test", "tests", "testing", "testdata", "test-data", "fuzz", "fuzzing", "benches", "bench",
             "benchmark", "benchmarks", "examples", "example", "vendor", "third_party", "thirdparty",
             "third-party", "contrib", "debian", "doc", "docs", "build", "gen", "generated"}
TEST_NAME = re.compile(r"(_test\.go|Test\.java|Tests\.java|_test\.cc|_test\.cpp|_unittest\.cc|_test\.c)$")
ORIG = re.compile(r"\.orig(-[\w-]+)?\.tar\.(gz|xz|bz2)$")


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    licences: dict[str, int]  # permissive family -> files kept
    files: tuple[tuple[str, str, str], ...]  # (path, text, language)
    skipped: dict[str, int]
    problem: str | None = None


class Apt:
    """apt-get with its own deb-src list, lists and cache under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        (self.root / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        (self.root / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
        (self.root / "sources.list").write_text(MIRROR + "\n")
        self.options = ["-o", f"Dir::Etc::SourceList={self.root / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/dev/null",
                        "-o", f"Dir::State::Lists={self.root / 'lists'}", "-o", f"Dir::Cache={self.root / 'cache'}",
                        "-o", "Debug::NoLocking=1"]

    def update(self) -> None:
        if not any((self.root / "lists").glob("*Sources*")):
            subprocess.run(["apt-get", *self.options, "update"], check=True, capture_output=True, timeout=600)

    def download(self, name: str, folder: Path) -> Path | None:
        """The package's source files (.dsc, orig and debian tarballs) in folder/NAME; None when apt fails."""
        target = folder / name
        if complete(target):
            return target
        target.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(["apt-get", *self.options, "source", "--download-only", name], cwd=target,
                                capture_output=True, text=True, timeout=900, check=False)
        return target if result.returncode == 0 and complete(target) else None


def complete(folder: Path) -> bool:
    """The .dsc and at least one upstream tarball are there (the mirror reached from here answers 404 for
    some packages' tarballs after serving their .dsc)."""
    return folder.is_dir() and any(folder.glob("*.dsc")) and any(ORIG.search(p.name) for p in folder.iterdir())


@dataclass(frozen=True)
class Paragraph:
    patterns: tuple[str, ...]
    licence: str


def copyright_paragraphs(text: str) -> list[Paragraph] | None:
    """The Files paragraphs of a machine-readable debian/copyright, in order; None when it is not one."""
    if "Format:" not in text[:500] or "Files:" not in text:
        return None
    out = []
    for block in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and key is not None:
                if key == "files":
                    fields[key] += " " + line.strip()
                continue
            name, _, value = line.partition(":")
            key = name.strip().lower()
            fields[key] = value.strip()
        if "files" in fields and "license" in fields:
            out.append(Paragraph(tuple(fields["files"].split()), fields["license"]))
    return out


def licence_of(path: str, paragraphs: list[Paragraph]) -> str | None:
    """The licence of the last paragraph whose pattern matches `path` (the format's rule)."""
    found = None
    for paragraph in paragraphs:
        if any(fnmatch.fnmatchcase(path, pattern) for pattern in paragraph.patterns):
            found = paragraph.licence
    return found


def _tar_members(archive: Path, strip: bool = True) -> list[tuple[str, bytes]]:
    """(path, bytes) of the archive's debian/copyright and source files; `strip`: paths without their
    first folder (an upstream tarball's NAME-VERSION/)."""
    out = []
    with tarfile.open(archive) as tf:
        for member in tf.getmembers():
            if not member.isfile():
                continue
            parts = PurePosixPath(member.name).parts
            relative = str(PurePosixPath(*parts[1:])) if strip and len(parts) > 1 else member.name
            wanted = relative == "debian/copyright" or PurePosixPath(relative).suffix in LANGUAGES
            handle = tf.extractfile(member) if wanted else None
            if handle is not None:
                out.append((relative, handle.read()))
    return out


def read(folder: Path) -> Package:
    dsc = sorted(folder.glob("*.dsc"))
    name, _, version = dsc[0].stem.partition("_") if dsc else (folder.name, "", "?")
    origs = sorted(a for a in folder.iterdir() if ORIG.search(a.name))
    debian = [m for a in folder.iterdir() if re.search(r"\.debian\.tar\.(gz|xz|bz2)$", a.name)
              for m in _tar_members(a, strip=False)]
    copyright_text = next((data.decode("utf-8", "replace") for path, data in debian if path == "debian/copyright"), None)
    if copyright_text is None:
        copyright_text = next((data.decode("utf-8", "replace") for a in origs
                               for path, data in _tar_members(a) if path == "debian/copyright"), None)
    paragraphs = copyright_paragraphs(copyright_text or "")
    if paragraphs is None:
        return Package(name, version, {}, (), {}, "debian/copyright missing or not machine-readable")
    files: list[tuple[str, str, str]] = []
    skipped: dict[str, int] = {}
    kept: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for archive in origs:
        component = ORIG.search(archive.name).group(1)  # type: ignore[union-attr]
        prefix = component[1:] + "/" if component else ""
        for relative, data in _tar_members(archive):
            path = prefix + relative
            parts = PurePosixPath(path).parts
            if any(part.lower() in SKIP_DIRS for part in parts[:-1]) or TEST_NAME.search(parts[-1]):
                skip("debian: tests, examples, vendored or generated directory")
                continue
            family = permissive(licence_of(path, paragraphs) or "")
            if family is None:
                skip("debian: licence not permissive (or not stated) for the file")
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                skip("not UTF-8")
                continue
            files.append((path, text, LANGUAGES[PurePosixPath(path).suffix]))
            kept[family] = kept.get(family, 0) + 1
    return Package(name, version, kept, tuple(sorted(files)), skipped)
