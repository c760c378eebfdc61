"""Where a file's project starts."""

from __future__ import annotations

from pathlib import Path

MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")


def repo_root(path: str | Path) -> Path | None:
    """The nearest folder at or above `path` that holds a `.git` or a Python project file, or None."""
    here = Path(path).resolve()
    for folder in (here, *here.parents) if here.is_dir() else here.parents:
        if any((folder / marker).exists() for marker in MARKERS):
            return folder
    return None
