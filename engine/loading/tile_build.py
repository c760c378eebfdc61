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
import threading
from functools import cache
from pathlib import Path

from engine.kernels.tile_int4 import CPU_FLAGS, FLAGS, SOURCE, bind
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
    what = "|".join([SOURCE.read_text(), str(cc), *FLAGS, cpu_name(), *sorted(all_cpu_flags())])
    return hashlib.sha256(what.encode()).hexdigest()[:24]


def failed_note() -> Path:
    return library_path().with_suffix(".failed")


class _Build:
    """This process's build and load of the library: one of each."""

    lock = threading.Lock()
    thread: threading.Thread | None = None
    loaded: ctypes.CDLL | None = None
    done = False


def start_build() -> None:
    """Compile the library in the background if this machine wants it and it is not built yet."""
    with _Build.lock:
        if _Build.thread is not None or _Build.done or not wanted() or library_path().exists():
            return
        _Build.thread = threading.Thread(target=_compile, name="dcomplete-tile-int4", daemon=True)
        _Build.thread.start()


def _compile() -> None:
    path = library_path()
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([str(compiler()), *FLAGS, str(SOURCE), "-o", str(temp)], capture_output=True,
                              text=True, timeout=300, check=False)
        if done.returncode == 0:
            temp.replace(path)
        else:
            _failed(f"{compiler()} exited {done.returncode}: "
                    + (done.stderr.strip().splitlines() or ["no output"])[0])
    except (OSError, subprocess.SubprocessError) as exc:
        _failed(str(exc))
    finally:
        temp.unlink(missing_ok=True)


def _failed(why: str) -> None:
    log.warning("the AMX int4 kernel did not build (%s); %s", why, FALLBACK)
    try:
        failed_note().write_text(why + "\n")
    except OSError:
        pass


def library() -> ctypes.CDLL | None:
    """The kernel's library, ready to call (waiting for a build under way, starting one if none ran); None
    where this machine does not want it, the build failed, or `tile_int4.bind` refuses it."""
    start_build()
    with _Build.lock:
        thread = _Build.thread
    if thread is not None:
        thread.join()
    with _Build.lock:
        if not _Build.done:
            _Build.loaded = _load() if wanted() and library_path().exists() else None
            _Build.done = True
        return _Build.loaded


def _load() -> ctypes.CDLL | None:
    try:
        lib = bind(ctypes.CDLL(str(library_path())))
    except OSError as exc:
        log.warning("the AMX int4 kernel did not load (%s); %s", exc, FALLBACK)
        return None
    if lib is None:
        _failed("the tiles are refused to this process or the built kernel's products are wrong")
    return lib
