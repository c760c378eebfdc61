"""Read a PyPI source distribution: its licence metadata and its Python files."""

from __future__ import annotations

import re
import tarfile
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath

_FAMILIES = (
    ("MIT", re.compile(r"\bMIT\b|Expat", re.IGNORECASE)),
    ("BSD", re.compile(r"\bBSD\b", re.IGNORECASE)),
    ("Apache-2.0", re.compile(r"Apache", re.IGNORECASE)),
    ("PSF-2.0", re.compile(r"\bPSF\b|Python Software Foundation", re.IGNORECASE)),
)
_COPYLEFT = re.compile(r"\b(L?GPL|AGPL|MPL|Mozilla|EUPL|CDDL|EPL)\b|General Public", re.IGNORECASE)


@dataclass(frozen=True)
class SdistInfo:
    name: str
    version: str
    licence_fields: tuple[str, ...]
    python_files: tuple[tuple[str, str], ...]


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def licence_family(fields: tuple[str, ...]) -> str | None:
    """The permissive family named by the metadata, or None when absent, unknown or copyleft-tainted.

    Only the short fields are trusted (License-Expression, License-first-line, classifiers); a full licence
    text pasted into License is matched on its first line.
    """
    joined = " | ".join(fields)
    if not joined or _COPYLEFT.search(joined):
        return None
    found = [family for family, pattern in _FAMILIES if pattern.search(joined)]
    return "/".join(found) if found else None


def _licence_fields(pkg_info: str) -> tuple[str, ...]:
    headers = HeaderParser().parsestr(pkg_info)
    fields: list[str] = []
    for key in ("License-Expression", "License"):
        value = (headers.get(key) or "").strip()
        if value and value.upper() != "UNKNOWN":
            fields.append(value.splitlines()[0].strip())
    fields += [c for c in headers.get_all("Classifier") or [] if c.startswith("License ::")]
    return tuple(fields)


def _members(archive: Path) -> list[tuple[str, bytes]]:
    """(path, bytes) of PKG-INFO and every .py member; other members are skipped unread."""
    out: list[tuple[str, bytes]] = []
    wanted = (".py", "PKG-INFO")
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if not info.is_dir() and info.filename.endswith(wanted):
                    out.append((info.filename, zf.read(info)))
        return out
    with tarfile.open(archive) as tf:
        for member in tf.getmembers():
            if member.isfile() and member.name.endswith(wanted):
                handle = tf.extractfile(member)
                if handle is not None:
                    out.append((member.name, handle.read()))
    return out


def read_sdist(archive: Path) -> SdistInfo:
    members = _members(archive)
    top_pkg_info = [
        data for path, data in members if len(PurePosixPath(path).parts) == 2 and path.endswith("PKG-INFO")
    ]
    if not top_pkg_info:
        raise ValueError(f"{archive}: no top-level PKG-INFO")
    pkg_info = top_pkg_info[0].decode("utf-8", errors="replace")
    headers = HeaderParser().parsestr(pkg_info)
    files: list[tuple[str, str]] = []
    for path, data in members:
        if not path.endswith(".py"):
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        files.append((str(PurePosixPath(*PurePosixPath(path).parts[1:])), text))
    return SdistInfo(
        name=canonical_name(headers.get("Name", archive.name)),
        version=headers.get("Version", "?"),
        licence_fields=_licence_fields(pkg_info),
        python_files=tuple(sorted(files)),
    )
