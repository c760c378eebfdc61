"""JavaScript and TypeScript sources from npm: `npm pack` tarballs, their package.json licence and their
own source files (no bundles, minified or compiled output, type declarations or tests)."""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from training.licences import permissive

LANGUAGES = {".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
             ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript"}
SKIP_DIRS = {"dist", "build", "umd", "bundle", "bundles", "min", "esm5", "cjs", "esm", "fesm2015", "fesm2022",
             "node_modules", "test", "tests", "__tests__", "spec", "benchmark", "benchmarks", "fixtures",
             "coverage", "docs", "example", "examples", "vendor", "third_party"}
COMPILED = re.compile(r"sourceMappingURL=|webpackBootstrap|Object\.defineProperty\(exports, \"__esModule\"|"
                      r"__webpack_require__|/\*! For license information|\b__awaiter\b|System\.register\(")
TEST_NAME = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    licence: str | None
    licence_field: str
    files: tuple[tuple[str, str, str], ...]  # (path, text, language)
    skipped: dict[str, int]


def download(name: str, folder: Path) -> Path | None:
    """`npm pack NAME` into `folder` (kept: a second run reuses it); None when npm fails."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = name.lstrip("@").replace("/", "-")
    found = sorted(folder.glob(f"{stem}-[0-9]*.tgz"))
    if found:
        return found[-1]
    try:
        result = subprocess.run(["npm", "pack", name, "--pack-destination", str(folder), "--json", "--silent"],
                                capture_output=True, text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:
        return None
    if result.returncode != 0:
        return None
    try:
        return folder / json.loads(result.stdout)[0]["filename"]
    except (ValueError, KeyError, IndexError):
        return None


def _licence_field(meta: dict[str, object]) -> str:
    value = meta.get("license") or meta.get("licenses") or ""
    if isinstance(value, dict):
        value = value.get("type", "")
    if isinstance(value, list):
        value = " OR ".join(str(v.get("type", "") if isinstance(v, dict) else v) for v in value)
    return str(value)


def skip_reason(path: str, text: str) -> str | None:
    """Why a source file of an npm package is left out, or None."""
    parts = PurePosixPath(path).parts
    name = parts[-1]
    if any(part in SKIP_DIRS for part in parts[:-1]):
        return "npm: build output, tests or vendored directory"
    if name.endswith((".d.ts", ".d.mts", ".d.cts")):
        return "npm: type declarations"
    if ".min." in name or TEST_NAME.search(name):
        return "npm: minified or test file"
    if COMPILED.search(text[:4000]) or COMPILED.search(text[-400:]):
        return "npm: compiled or bundled output"
    return None


def read(archive: Path) -> Package:
    meta: dict[str, object] = {}
    files: list[tuple[str, str, str]] = []
    skipped: dict[str, int] = {}
    with tarfile.open(archive) as tf:
        members = [m for m in tf.getmembers() if m.isfile()]
        for member in members:
            relative = str(PurePosixPath(*PurePosixPath(member.name).parts[1:]))
            if relative == "package.json":
                handle = tf.extractfile(member)
                if handle is not None:
                    meta = json.loads(handle.read().decode("utf-8", "replace"))
                continue
            language = LANGUAGES.get(PurePosixPath(relative).suffix)
            if language is None:
                continue
            handle = tf.extractfile(member)
            if handle is None:
                continue
            try:
                text = handle.read().decode("utf-8")
            except UnicodeDecodeError:
                skipped["not UTF-8"] = skipped.get("not UTF-8", 0) + 1
                continue
            reason = skip_reason(relative, text)
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            files.append((relative, text, language))
    field = _licence_field(meta)
    return Package(str(meta.get("name", archive.stem)), str(meta.get("version", "?")), permissive(field), field,
                   tuple(sorted(files)), skipped)
