"""Run untrusted check programs (model completions plus HumanEval tests), one per sandboxed subprocess.

Every program is treated as hostile (research/benchmarks.md §4.5). Each one runs as `python -I` in a fresh
temporary directory with a minimal environment, resource limits (address space, CPU time, file size, open
files, processes, no core dumps) and a wall-clock timeout that kills its whole process group. On top of that,
the strongest isolation this host allows is used, probed once per process:

- "netns+nobody": running as root, the program gets an empty network namespace (`unshare -n`: not even
  loopback is up) and runs as uid/gid 65534 with no supplementary groups and no-new-privs (`setpriv`), so it
  cannot write anything owned by root or open any connection.
- "userns+netns": not root but unprivileged user namespaces work (`unshare -rn`): no network, but the
  program keeps the invoking user's file permissions.
- "rlimits-only": neither works; proxies are removed from the environment but the network is reachable,
  and a program that calls setsid() can outlive its timeout.

With either namespace level the program is also pid 1 of a new pid namespace (`-p -f --kill-child`): when
the timeout kills the group, the kernel kills every process left in that namespace, including any that
escaped the process group with setsid(). Not isolated at any level: reading world-readable host files
(there is no mount namespace or read-only root), and writing world-writable places such as /tmp. The
rlimits are applied by util-linux `prlimit`, which must be installed.

Timeouts and crashes count as failures. The isolation level is reported with every result set.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

NOBODY = 65534
_PRLIMIT = shutil.which("prlimit")
STDERR_TAIL_CHARS = 2000


@dataclass(frozen=True)
class SandboxLimits:
    wall_seconds: float = 5.0
    cpu_seconds: int = 5
    address_space_bytes: int = 1 << 30
    file_size_bytes: int = 16 << 20
    open_files: int = 64
    processes: int = 64


@dataclass(frozen=True)
class ExecResult:
    passed: bool
    timed_out: bool
    returncode: int | None
    stderr_tail: str


def check_program(filled: str, test: str, entry_point: str) -> str:
    """The program whose clean exit means the completion passes. human-eval-infilling `execution.py` runs
    `prompt + completion + suffix + "\n" + test + "\n" + f"check({entry_point})"`; `filled` is the first
    three."""
    return filled + "\n" + test + "\n" + f"check({entry_point})"


def _probe(command: list[str]) -> bool:
    try:
        return subprocess.run(command, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@lru_cache(maxsize=1)
def isolation_wrapper() -> tuple[str, tuple[str, ...]]:
    """(level name, command prefix) for the strongest isolation available here; see the module docstring."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if os.geteuid() == 0 and unshare and setpriv:
        wrapper = (unshare, "-n", "-p", "-f", "--kill-child", "--",
                   setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--nnp", "--")
        if _probe([*wrapper, "true"]):
            return "netns+nobody", wrapper
    if unshare and _probe([unshare, "-rnpf", "--kill-child", "--", "true"]):
        return "userns+netns", (unshare, "-rnpf", "--kill-child", "--")
    return "rlimits-only", ()


def _minimal_env(workdir: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}


def _rlimit_args(limits: SandboxLimits) -> list[str]:
    """`prlimit` options; rlimits are set by a wrapper rather than preexec_fn, which is unsafe in threads."""
    return [f"--as={limits.address_space_bytes}", f"--cpu={limits.cpu_seconds}",
            f"--fsize={limits.file_size_bytes}", f"--nofile={limits.open_files}",
            f"--nproc={limits.processes}", "--core=0"]


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - STDERR_TAIL_CHARS))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def run_program(program: str, limits: SandboxLimits = SandboxLimits(),
                python: str = sys.executable) -> ExecResult:
    """Run `program` once in the sandbox; passed means exit status 0 within the wall-clock limit."""
    if _PRLIMIT is None:
        raise RuntimeError("bench.humaneval_exec needs util-linux `prlimit` on PATH to limit its programs")
    level, wrapper = isolation_wrapper()
    workdir = tempfile.mkdtemp(prefix="dcomplete-exec-")
    try:
        if level == "netns+nobody":
            os.chown(workdir, NOBODY, NOBODY)
        os.chmod(workdir, 0o700)
        source = Path(workdir, "program.py")
        source.write_text(program, encoding="utf-8")
        stderr_path = Path(workdir, "stderr.txt")
        with open(os.devnull, "wb") as devnull, open(stderr_path, "wb") as stderr:
            command = [_PRLIMIT, *_rlimit_args(limits), "--", *wrapper, python, "-I", str(source)]
            proc = subprocess.Popen(command, cwd=workdir, env=_minimal_env(workdir), stdin=subprocess.DEVNULL,
                                    stdout=devnull, stderr=stderr, start_new_session=True, close_fds=True)
            try:
                returncode = proc.wait(timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                return ExecResult(False, True, None, _tail(stderr_path))
            _kill_group(proc)  # reap anything the program left running in its group
        return ExecResult(returncode == 0, False, returncode, _tail(stderr_path))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_programs(programs: Sequence[str], limits: SandboxLimits = SandboxLimits(),
                 workers: int | None = None) -> list[ExecResult]:
    """Run many programs, each in its own sandboxed process, a few at a time; results keep input order."""
    workers = workers or max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda program: run_program(program, limits), programs))
