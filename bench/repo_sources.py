"""The vendored packages of bench.repo_context, kept as one archive (`sources.tar.gz`) in the tree and
unpacked once into the user cache, keyed by the archive's digest. Third-party code stays out of the
project's own Python files, which its linters, size rules and duplicate checks read."""

from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "repo_context"
ARCHIVE = DATA / "sources.tar.gz"


@dataclass(frozen=True)
class Hole:
    """One line of a vendored package to complete (`holes.jsonl`): `line` 0-based in `path`, the `names`
    it uses that other modules of the package (`defined_in`) define."""

    package: str
    path: str
    line: int
    text: str
    names: tuple[str, ...]
    defined_in: tuple[str, ...]

    @property
    def task_id(self) -> str:
        return f"{self.package}/{self.path}:{self.line + 1}"

    @staticmethod
    def from_row(row: dict[str, Any]) -> Hole:
        """The hole a `holes.jsonl` line (`dataclasses.asdict` of one) holds."""
        return Hole(row["package"], row["path"], row["line"], row["text"], tuple(row["names"]),
                    tuple(row["defined_in"]))


def sources(archive: Path = ARCHIVE) -> Path:
    """The folder holding one sub-folder per vendored package (`<name>-<version>/`), unpacked on first use."""
    from engine.loading.gguf_base import cache_root

    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    target = cache_root() / "repo_context" / digest
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    unpacked = Path(tempfile.mkdtemp(dir=target.parent, prefix=".unpacking-"))
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    try:
        os.rename(unpacked, target)
    except OSError:  # another process unpacked it first
        shutil.rmtree(unpacked, ignore_errors=True)
    return target


def pack(folder: Path, archive: Path = ARCHIVE) -> None:
    """Write every file below `folder` into `archive`, in sorted order with fixed metadata, so the same
    files give the same bytes (and the same cache folder); xz when the archive's name ends in .xz (its
    window spans the whole archive, so near-copies of a file cost little), else gzip."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            info = tarfile.TarInfo(path.relative_to(folder).as_posix())
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    archive.write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME) if archive.name.endswith(".xz")
                        else gzip.compress(data, mtime=0))
