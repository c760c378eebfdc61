"""Building dcomplete's C kernels on the machine that runs them, once: the int4 products on AMX tiles or
AVX2 (`engine.kernels.tile_int4`), the decoding attention (`engine.kernels.row_attention`) and a step's small
row operations, norms and rotations (`engine.kernels.row_ops`).

`start_build` runs the C compiler in a background thread at the start of a load (the compiler is its own
process, 0.5 s on the 2-core Xeon), where reading the GGUF file and fusing the model take longer; `library`
waits for it where the kernel is first needed. A library is kept under the cache root, named by its source,
compiler, flags and this CPU, so later loads only map it. A build that fails leaves a note beside it (later
loads do not try again) and torch's form of the same work serves; nothing raises.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from torch import nn

from engine.kernels import int4_product, row_attention, row_ops, tile_int4
from engine.loading.gguf_base import cache_root
from engine.loading.tuning import all_cpu_flags, cpu_name
from engine.models.layers import Attention, RMSNorm

log = logging.getLogger(__name__)


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


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


@dataclass(frozen=True)
class NativeKernel:
    """One C source of `engine/kernels`, how it is compiled and checked, and what serves without it."""

    name: str  # the library's file name starts with it
    what: str  # for the log: "the AMX int4 kernel"
    source: Path
    flags: tuple[str, ...]
    cpu_flags: tuple[str, ...]  # /proc/cpuinfo's names, all needed
    backend: str  # names the source's version (its digest)
    bind: Callable[[ctypes.CDLL], ctypes.CDLL | None] = field(repr=False)
    env: str  # "off" opts out
    fallback: str  # what serves without it, for the log

    def wanted(self) -> bool:
        """Whether loads on this machine run this kernel: Linux on x86-64 with its CPU flags, a C compiler, no
        earlier build that failed, its environment variable not "off"."""
        return (os.environ.get(self.env, "") != "off" and platform.system() == "Linux"
                and platform.machine() == "x86_64" and set(self.cpu_flags) <= all_cpu_flags()
                and compiler() is not None and not self.failed_note().exists())

    def library_path(self) -> Path:
        what = "|".join([self.backend, str(compiler()), *self.flags, cpu_name(), *sorted(all_cpu_flags())])
        return cache_root() / "kernels" / f"{self.name}-{hashlib.sha256(what.encode()).hexdigest()[:24]}.so"

    def failed_note(self, path: Path | None = None) -> Path:
        """Where a failed build of the library at `path` (this process's) says why."""
        return (path or self.library_path()).with_suffix(".failed")

    def start_build(self) -> None:
        """Compile the library in the background if this machine wants it and it is not built yet."""
        path = self.library_path()
        with _lock:
            build = _builds.setdefault(path, _Build(path))
            if build.thread is not None or build.done or not self.wanted() or path.exists():
                return
            build.thread = threading.Thread(target=self._compile, args=(build,), name=f"dcomplete-{self.name}",
                                            daemon=True)
            build.thread.start()

    def _compile(self, build: _Build) -> None:
        path = build.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_suffix(f".{os.getpid()}.tmp")
            temp.touch()
        except OSError:  # a read-only cache folder: this process builds its own copy
            path = build.path = Path(tempfile.mkdtemp(prefix="dcomplete-")) / path.name
            temp = path.with_suffix(".tmp")
        try:
            done = subprocess.run([str(compiler()), *self.flags, str(self.source), "-o", str(temp)],
                                  capture_output=True, text=True, timeout=300, check=False)
            if done.returncode == 0:
                temp.replace(path)
            else:
                self._failed(path, f"{compiler()} exited {done.returncode}: "
                             + (done.stderr.strip().splitlines() or ["no output"])[0])
        except (OSError, subprocess.SubprocessError) as exc:
            self._failed(path, str(exc))
        finally:
            temp.unlink(missing_ok=True)

    def _failed(self, path: Path, why: str) -> None:
        log.warning("%s is not used (%s); %s", self.what, why, self.fallback)
        try:
            self.failed_note(path).write_text(why + "\n")
        except OSError:
            pass

    def library(self) -> ctypes.CDLL | None:
        """The kernel's library, ready to call (waiting for a build under way, starting one if none ran); None
        where this machine does not want it, the build failed, or `bind` refuses it."""
        self.start_build()
        path = self.library_path()
        with _lock:
            build = _builds.setdefault(path, _Build(path))
            thread = build.thread
        if thread is not None:
            thread.join()
        with _lock:
            if not build.done:
                build.loaded = self._load(build.path) if self.wanted() and build.path.exists() else None
                build.done = True
            return build.loaded

    def _load(self, path: Path) -> ctypes.CDLL | None:
        try:
            lib = self.bind(ctypes.CDLL(str(path)))
        except OSError as exc:
            log.warning("%s is not used (%s); %s", self.what, exc, self.fallback)
            return None
        if lib is None:
            self._failed(path, "the built kernel's results are wrong, or this process may not use the CPU "
                         "features it needs")
        return lib


TILE_INT4 = NativeKernel("tile_int4", "the AMX int4 kernel", tile_int4.SOURCE, tile_int4.FLAGS, tile_int4.CPU_FLAGS,
                         tile_int4.BACKEND, tile_int4.bind, "DCOMPLETE_INT4_TILES", "the next int4 kernel serves")
INT4_AVX2 = NativeKernel("int4_avx2", "the AVX2 int4 kernel", tile_int4.AVX2_SOURCE, tile_int4.AVX2_FLAGS,
                         tile_int4.AVX2_CPU_FLAGS, tile_int4.AVX2_BACKEND, tile_int4.bind, "DCOMPLETE_INT4_AVX2",
                         "torch's int4 kernel serves")
INT4_VNNI = NativeKernel("int4_vnni", "the AVX-512 VNNI int4 kernel", tile_int4.AVX2_SOURCE, tile_int4.VNNI_FLAGS,
                         tile_int4.VNNI_CPU_FLAGS, tile_int4.VNNI_BACKEND, tile_int4.bind, "DCOMPLETE_INT4_VNNI",
                         "the AVX2 int4 kernel serves")
ROW_ATTENTION = NativeKernel("row_attention", "the decoding attention kernel", row_attention.SOURCE,
                             row_attention.FLAGS, row_attention.CPU_FLAGS, row_attention.BACKEND, row_attention.bind,
                             "DCOMPLETE_ATTENTION_AVX512", "its AVX2 form or torch's products serve")
ROW_ATTENTION_TILES = NativeKernel("row_attention_tiles", "the decoding attention's AMX form", row_attention.SOURCE,
                                   row_attention.TILE_FLAGS, row_attention.TILE_CPU_FLAGS, row_attention.TILE_BACKEND,
                                   row_attention.bind_tiles, "DCOMPLETE_ATTENTION_TILES", "its AVX-512 form serves")
ROW_ATTENTION_AVX2 = NativeKernel("row_attention_avx2", "the decoding attention's AVX2 form", row_attention.AVX2_SOURCE,
                                  row_attention.AVX2_FLAGS, row_attention.AVX2_CPU_FLAGS, row_attention.AVX2_BACKEND,
                                  row_attention.bind, "DCOMPLETE_ATTENTION_AVX2", "torch's products serve")
ATTENTION_SWITCH = "DCOMPLETE_ROW_ATTENTION"  # "off": torch's products, whatever the CPU has
ROW_OPS = NativeKernel("row_ops", "the norm and rotation kernel", row_ops.SOURCE, row_ops.FLAGS, row_ops.CPU_FLAGS,
                       row_ops.BACKEND, row_ops.bind, "DCOMPLETE_ROW_OPS", "torch's norms and rotations serve")


def attention_forms() -> list[NativeKernel]:
    """The decoding attention's builds this machine wants, best first (each serves where those before it
    fail): AMX tiles, AVX-512 BF16 vectors, AVX2; none where `ATTENTION_SWITCH` is "off". Each form's own
    switch turns it off alone (to measure the next on a CPU that has both)."""
    if os.environ.get(ATTENTION_SWITCH, "") == "off":
        return []
    return [kernel for kernel in (ROW_ATTENTION_TILES, ROW_ATTENTION, ROW_ATTENTION_AVX2) if kernel.wanted()]


def first_built(kernels: list[NativeKernel]) -> ctypes.CDLL | None:
    """The library of the first of `kernels` (a work's forms, best first) that builds and passes its checks."""
    for kernel in kernels:
        lib = kernel.library()
        if lib is not None:
            return lib
    return None


def attention_library() -> ctypes.CDLL | None:
    """The decoding attention this machine runs; None: torch's products."""
    return first_built(attention_forms())


def int4_forms() -> list[NativeKernel]:
    """The int4 kernel's builds this machine wants, best first (each serves where those before it fail): AMX
    tiles, AVX-512 VNNI, AVX2; none where `DCOMPLETE_INT4` is "off". (On the AMX Xeon the VNNI build is the
    faster at one to three rows, the tiles at eight or more: the tiles keep the multi-row steps cheap.)"""
    if os.environ.get("DCOMPLETE_INT4", "") == "off":
        return []
    return [kernel for kernel in (TILE_INT4, INT4_VNNI, INT4_AVX2) if kernel.wanted()]


def int4_library() -> ctypes.CDLL | None:
    """The int4 kernel this machine runs; None: torch's int4 kernel."""
    return first_built(int4_forms())


def int4_offered() -> bool:
    """Whether CPU loads make the checkpoint's 4-bit blocks an `int4` kernel for the calibration to race:
    where torch's int4 kernel is worth it (`int4_product.enabled`) or one of dcomplete's builds here."""
    return int4_product.enabled() or bool(int4_forms())


def start_builds(int4: bool) -> None:
    """A CPU load's start: the attention's and the row operations' builds, and the int4 kernel's when
    `int4` products are made."""
    for kernel in attention_forms()[:1]:
        kernel.start_build()
    ROW_OPS.start_build()
    if int4:
        for kernel in int4_forms()[:1]:
            kernel.start_build()


def install(model: nn.Module) -> None:
    """Put the built kernels to work for `model` (a CPU load's, before a calibration times its steps): the
    decoding attention for this process (`row_attention.install`), the row operations in `model`'s norms
    and attention modules."""
    attention = attention_library()
    if attention is not None:
        row_attention.install(attention)
    lib = ROW_OPS.library()
    ops = row_ops.RowOps(lib) if lib is not None else None
    for module in model.modules():
        if isinstance(module, (RMSNorm, Attention)):
            module.native = ops
