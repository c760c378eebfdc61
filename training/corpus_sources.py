"""Where the corpus comes from: CPython's standard library, PyPI sdists, npm packages and Debian source
packages, each fetched into corpus_cache/ once and read back as (package, files) with a licence.

Licences: PyPI by PKG-INFO (`sdist.licence_family`), npm by package.json, Debian per file by the machine-
readable debian/copyright; only MIT/Expat, BSD, Apache-2.0, ISC, PSF and zlib are taken (training.licences).
A package of npm or Debian gives at most MAX_PACKAGE_BYTES of source (files in path-hash order), so no
single project dominates its language.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from training import debian_source, npm_source
from training.sdist import SdistInfo, canonical_name, licence_family, read_sdist

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "corpus_cache"
SDIST_DIR, NPM_DIR, DEBIAN_DIR, APT_DIR = CACHE / "sdists", CACHE / "npm", CACHE / "debian", CACHE / "apt"
HERE = Path(__file__).parent
PYPI_LIST, NPM_LIST, DEBIAN_LIST = HERE / "packages.txt", HERE / "packages_npm.txt", HERE / "packages_debian.txt"
STDLIB = Path("/root/.pyenv/versions/3.11.7/lib/python3.11")
STDLIB_VERSION = "3.11.7"
MAX_PACKAGE_BYTES = 4_000_000
# Tests are not useful completion material; vendored trees carry other projects' (some copyleft) licences.
SKIP_DIRS = {"test", "tests", "testing", "idle_test", "site-packages", "__pycache__", "_vendor", "vendor",
             "_vendored", "vendored", "extern", "_extern", "third_party"}


@dataclass(frozen=True)
class SourceFile:
    package: str
    path: str
    text: str
    language: str


@dataclass
class PackageStats:
    name: str
    version: str
    licence: str
    source: str
    files: int = 0
    val_files: int = 0
    bytes: int = 0


Rejected = list[dict[str, str]]
Source = tuple[PackageStats, Iterator[SourceFile]]


def read_list(path: Path) -> list[tuple[str, str]]:
    """(name, version) per line of a package list ("" when unpinned); comments after #."""
    specs = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            specs.append((name.strip(), version.strip()))
    return specs


def download_all() -> None:
    """Fetch whatever of the three lists is not cached yet (pip, npm pack, apt-get source)."""
    have = set(cached_sdists())
    SDIST_DIR.mkdir(parents=True, exist_ok=True)
    for name, version in read_list(PYPI_LIST):
        if canonical_name(name) not in have:
            print(f"downloading {name}=={version}", flush=True)
            try:
                subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                                "-d", str(SDIST_DIR), f"{name}=={version}"], check=False, capture_output=True,
                               timeout=300)
            except subprocess.TimeoutExpired:
                print(f"  pip download timed out for {name}", flush=True)
    for name, version in read_list(NPM_LIST):
        npm_source.download(f"{name}@{version}" if version else name, NPM_DIR)
    apt = debian_source.Apt(APT_DIR)
    apt.update()
    for name, _ in read_list(DEBIAN_LIST):
        apt.download(name, DEBIAN_DIR)


def cached_sdists() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for archive in sorted(SDIST_DIR.glob("*")):
        if archive.name.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz")):
            found[canonical_name(archive.name.rsplit("-", 1)[0])] = archive
    return found


def in_skipped_dir(relative: Path) -> bool:
    return any(part in SKIP_DIRS or part.startswith("test_") for part in relative.parts[:-1])


def stdlib_files() -> Iterator[SourceFile]:
    for file in sorted(STDLIB.rglob("*.py")):
        relative = file.relative_to(STDLIB)
        if in_skipped_dir(relative):
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        yield SourceFile("cpython-stdlib", str(relative), text, "python")


def pypi_sources(rejected: Rejected) -> Iterator[Source]:
    yield PackageStats("cpython-stdlib", STDLIB_VERSION, "PSF-2.0", "local CPython install"), stdlib_files()
    archives = cached_sdists()
    for name, version in read_list(PYPI_LIST):
        archive = archives.get(canonical_name(name))
        if archive is None:
            rejected.append({"package": f"{name}=={version}", "reason": "sdist not downloaded"})
            continue
        info: SdistInfo = read_sdist(archive)
        family = licence_family(info.licence_fields)
        if family is None:
            reason = "licence not permissive: " + "; ".join(info.licence_fields)[:200]
            rejected.append({"package": f"{name}=={info.version}", "reason": reason})
            continue
        stats = PackageStats(info.name, info.version, family, f"PyPI sdist {archive.name}")
        yield stats, (SourceFile(info.name, path, text, "python") for path, text in info.python_files
                      if not in_skipped_dir(Path(path)))


def _capped(package: str, files: tuple[tuple[str, str, str], ...]) -> Iterator[SourceFile]:
    used = 0
    for path, text, language in sorted(files, key=lambda f: hashlib.sha256(f[0].encode()).hexdigest()):
        size = len(text.encode("utf-8"))
        if used + size > MAX_PACKAGE_BYTES:
            continue
        used += size
        yield SourceFile(package, path, text, language)


def npm_sources(rejected: Rejected, skipped: dict[str, int]) -> Iterator[Source]:
    for name, version in read_list(NPM_LIST):
        stem = name.lstrip("@").replace("/", "-")
        archives = sorted(NPM_DIR.glob(f"{stem}-{version or '[0-9]'}*.tgz"))
        if not archives:
            rejected.append({"package": f"npm {name}", "reason": "not downloaded"})
            continue
        package = npm_source.read(archives[-1])
        if package.licence is None:
            rejected.append({"package": f"npm {package.name}@{package.version}",
                             "reason": f"licence not permissive: {package.licence_field!r}"})
            continue
        for reason, count in package.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + count
        stats = PackageStats(f"npm:{package.name}", package.version, package.licence, f"npm {archives[-1].name}")
        yield stats, _capped(stats.name, package.files)


def debian_sources(rejected: Rejected, skipped: dict[str, int]) -> Iterator[Source]:
    for name, _ in read_list(DEBIAN_LIST):
        folder = DEBIAN_DIR / name
        if not debian_source.complete(folder):
            rejected.append({"package": f"debian {name}", "reason": "not downloaded: the mirror reached from here answered 404 for its tarballs"})
            continue
        package = debian_source.read(folder)
        for reason, count in package.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + count
        if package.problem or not package.files:
            rejected.append({"package": f"debian {package.name} {package.version}",
                             "reason": package.problem or "no source file under a permissive licence"})
            continue
        licence = "/".join(sorted(package.licences, key=lambda f: -package.licences[f]))
        stats = PackageStats(f"debian:{package.name}", package.version, licence, f"Debian bookworm source {package.name}")
        yield stats, _capped(stats.name, package.files)
