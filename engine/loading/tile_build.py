"""Building the AMX int4 kernel (`engine.kernels.tile_int4`) on the machine that runs it, once.

`start_build` runs the C compiler in a background thread at the start of a load (the compiler is its own
process, 0.5 s on the 2-core Xeon), where reading the GGUF file and fusing the model take longer; `library`
waits for it where the 4-bit products are made. The library is kept under the cache root, named by its
source, compiler, flags and this CPU, so later loads only map it. A build that fails leaves a note beside it
(later loads do not try again) and the loads use torch's int4 kernel; nothing raises.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from functools import cache
from pathlib import Path

from engine.kernels.tile_int4 import BACKEND, CPU_FLAGS, FLAGS, SOURCE, bind
from engine.loading.gguf_base import cache_root
from engine.loading.tuning import all_cpu_flags, cpu_name

log = logging.getLogger(__name__)

ENV = "DCOMPLETE_INT4_TILES"  # "off": torch's int4 kernel even where the tiles are
FALLBACK = "torch's int4 kernel serves"


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def wanted() -> bool:
    """Whether loads on this machine run the 4-bit products on the tiles: Linux on a CPU with AMX bfloat16
    tiles, a C compiler, no earlier build that failed, not `DCOMPLETE_INT4_TILES=off`."""
    return (os.environ.get(ENV, "") != "off" and platform.system() == "Linux" and platform.machine() == "x86_64"
            and set(CPU_FLAGS) <= all_cpu_flags() and compiler() is not None and not failed_note().exists())


def library_path() -> Path:
    return cache_root() / "kernels" / f"tile_int4-{_digest(compiler())}.so"


@cache
def _digest(cc: str | None) -> str:
    what = "|".join([BACKEND, str(cc), *FLAGS, cpu_name(), *sorted(all_cpu_flags())])  # BACKEND: the source's digest
    return hashlib.sha256(what.encode()).hexdigest()[:24]


def failed_note(path: Path | None = None) -> Path:
    """Where a failed build of the library at `path` (this process's) says why."""
    return (path or library_path()).with_suffix(".failed")


class _Build:
    """This process's build and load of the library at one path (a process that changes its cache folder or
    compiler, as tests do, gets one per library)."""

    def __init__(self, path: Path) -> None:
        self.path = path  # where the library is; a temp folder's when the cache folder cannot be written
        self.thread: threading.Thread | None = None
        self.loaded: ctypes.CDLL | None = None
        self.done = False


_lock = threading.Lock()
_builds: dict[Path, _Build] = {}


def start_build() -> None:
    """Compile the library in the background if this machine wants it and it is not built yet."""
    path = library_path()
    with _lock:
        build = _builds.setdefault(path, _Build(path))
        if build.thread is not None or build.done or not wanted() or path.exists():
            return
        build.thread = threading.Thread(target=_compile, args=(build,), name="dcomplete-tile-int4", daemon=True)
        build.thread.start()


def _compile(build: _Build) -> None:
    path = build.path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.tmp")
        temp.touch()
    except OSError:  # a read-only cache folder: this process builds its own copy
        path = build.path = Path(tempfile.mkdtemp(prefix="dcomplete-")) / path.name
        temp = path.with_suffix(".tmp")
    try:
        done = subprocess.run([str(compiler()), *FLAGS, str(SOURCE), "-o", str(temp)], capture_output=True,
                              text=True, timeout=300, check=False)
        if done.returncode == 0:
            temp.replace(path)
        else:
            _failed(path, f"{compiler()} exited {done.returncode}: "
                    + (done.stderr.strip().splitlines() or ["no output"])[0])
    except (OSError, subprocess.SubprocessError) as exc:
        _failed(path, str(exc))
    finally:
        temp.unlink(missing_ok=True)


def _failed(path: Path, why: str) -> None:
    log.warning("the AMX int4 kernel is not used (%s); %s", why, FALLBACK)
    try:
        failed_note(path).write_text(why + "\n")
    except OSError:
        pass


def library() -> ctypes.CDLL | None:
    """The kernel's library, ready to call (waiting for a build under way, starting one if none ran); None
    where this machine does not want it, the build failed, or `tile_int4.bind` refuses it."""
    start_build()
    path = library_path()
    with _lock:
        build = _builds.setdefault(path, _Build(path))
        thread = build.thread
    if thread is not None:
        thread.join()
    with _lock:
        if not build.done:
            build.loaded = _load(build.path) if wanted() and build.path.exists() else None
            build.done = True
        return build.loaded


def _load(path: Path) -> ctypes.CDLL | None:
    try:
        lib = bind(ctypes.CDLL(str(path)))
    except OSError as exc:
        log.warning("the AMX int4 kernel is not used (%s); %s", exc, FALLBACK)
        return None
    if lib is None:
        _failed(path, "the tiles are refused to this process or the built kernel's products are wrong")
    return lib
