"""Source files for the CLI: strict reading, unified diffs, atomic rewrites."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from pathlib import Path

BINARY_PROBE = 8192
TEMP_SUFFIX = ".dcomplete-tmp"


class BadInput(ValueError):
    """User input that cannot be used; the message is one line that names the input."""


def read_source(path: str | os.PathLike[str]) -> str:
    """The file's text, exactly as stored (no newline translation); BadInput names what is wrong."""
    name = os.fspath(path)
    if not os.path.lexists(name):
        raise BadInput(f"{name}: no such file")
    if os.path.isdir(name):
        raise BadInput(f"{name}: is a directory, not a file")
    if not os.path.isfile(name):
        raise BadInput(f"{name}: not a regular file")
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise BadInput(f"{name}: cannot read ({exc.strerror})") from None
    if b"\0" in data[:BINARY_PROBE]:
        raise BadInput(f"{name}: binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{name}: not UTF-8 (byte {exc.start})") from None


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff that `patch -p1` applies from the current directory (a/ and b/ prefixes)."""
    if old == new:
        return ""
    shown = os.path.relpath(path) if os.path.isabs(path) else os.path.normpath(path)
    lines = difflib.unified_diff(_lines(old), _lines(new), f"a/{shown}", f"b/{shown}")
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines split at "\n" only (str.splitlines also splits at \x0c, \x1c, U+2028, ..., which patch does not)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def atomic_write(path: str | os.PathLike[str], text: str) -> None:
    """Replace the file's contents in one step: a temp file in the same folder, fsync, os.replace.

    The file keeps its permission bits; a symlink is followed, so the link stays a link. The temp file's
    name holds the writer's pid: a process killed between mkstemp and os.replace leaves it behind, and
    `sweep_stale_temps` removes it on the next run once that pid is gone.
    """
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    mode = stat.S_IMODE(os.stat(target).st_mode)
    handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.{os.getpid()}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text.encode("utf-8"))
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def sweep_stale_temps(paths: list[str]) -> list[str]:
    """Remove temp files that `atomic_write` left next to `paths` in a process that no longer runs (it
    was killed mid-write); the removed paths. Temp files of a live process are left alone."""
    removed = []
    for folder, names in _by_folder(paths).items():
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            owner = _temp_owner(entry, names)
            if owner is None or _pid_alive(owner):
                continue
            try:
                os.unlink(os.path.join(folder, entry))
                removed.append(os.path.join(folder, entry))
            except FileNotFoundError:
                pass
    return removed


def _by_folder(paths: list[str]) -> dict[str, set[str]]:
    folders: dict[str, set[str]] = {}
    for path in paths:
        folder, name = os.path.split(os.path.realpath(path))
        folders.setdefault(folder, set()).add(name)
    return folders


def _temp_owner(entry: str, names: set[str]) -> int | None:
    """The pid in `.NAME.PID.RANDOM.dcomplete-tmp` when NAME is one of `names`, else None."""
    if not (entry.startswith(".") and entry.endswith(TEMP_SUFFIX)):
        return None
    stem, _, _random = entry[1 : -len(TEMP_SUFFIX)].rpartition(".")
    name, _, pid = stem.rpartition(".")
    return int(pid) if name in names and pid.isdigit() else None


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
