"""`dcomplete refactor --write` over 50 files, killed with SIGKILL at random moments (20 trials).

Every file must be byte-identical to its old or its new version after each kill, the next run removes
the temp files a killed run left, and a failed `--check` restores every file exactly.

Most of a run is starting Python and loading the model; the writes take the last few hundred
milliseconds. So each trial waits for the run's first write (its folder's mtime changes when the first
temp file appears) and kills it after a seeded random delay within the write window a calibration run
measured: kills land before, during and after the writes. Two trials run at a time, one per core.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

FILES = 50
TRIALS = 20
LANES = 2
SEED = 13
DCOMPLETE = Path(sys.executable).with_name("dcomplete")
COMMAND = [str(DCOMPLETE)] if DCOMPLETE.exists() else [sys.executable, "-m", "cli"]
ROOT = Path(__file__).resolve().parents[1]


def source(index: int) -> str:
    body = "\n".join(f"    value_{index}_{line} = {line} * x" for line in range(3))
    return f"def step_{index}(x):\n{body}\n    # <|hole:2|>\n    return x\n"


def write_originals(folder: Path) -> dict[str, bytes]:
    """The 50 files in their old version (each replaced atomically, so temp files of a killed run stay)."""
    originals = {}
    for index in range(FILES):
        path = folder / f"module_{index:02d}.py"
        data = source(index).encode()
        tmp = path.with_suffix(".restore")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        originals[path.name] = data
    return originals


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.glob("module_*.py")}


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".dcomplete-tmp"))


@dataclass
class Run:
    folder: Path
    process: subprocess.Popen[bytes]
    mtime: int
    first_write: float | None = None

    @classmethod
    def start(cls, folder: Path, model: Path, *extra: str) -> Run:
        """The CLI in `folder`; stderr goes to a file beside it (a pipe nobody reads would fill and block)."""
        args = ["refactor", ".", "--holes", "--write", "--model", str(model), "--allow-errors", "--retries", "0",
                "--batch", "50", *extra]
        mtime = folder.stat().st_mtime_ns
        with (folder.parent / f"{folder.name}.stderr").open("wb") as stderr:
            process = subprocess.Popen([*COMMAND, *args], cwd=folder, stdout=subprocess.DEVNULL, stderr=stderr,
                                       env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
        return cls(folder, process, mtime)

    def writing(self) -> bool:
        """Whether the run has begun writing (a temp file named with its pid appeared); remembers when.

        The folder's mtime says when to look: it also changes when the run removes temp files that
        killed runs left, which is not writing."""
        if self.first_write is None and (mtime := self.folder.stat().st_mtime_ns) != self.mtime:
            self.mtime = mtime
            if any(f".{self.process.pid}." in name for name in os.listdir(self.folder)):
                self.first_write = time.monotonic()
        return self.first_write is not None

    def finish(self) -> str:
        self.process.wait(timeout=300)
        return (self.folder.parent / f"{self.folder.name}.stderr").read_text(errors="replace")


def calibrate(folder: Path, model: Path) -> tuple[float, dict[str, bytes]]:
    """One run to the end: how long its writes took (first temp file to the last file replaced, seen as a
    new inode), and the new files."""
    write_originals(folder)
    inodes = {p: p.stat().st_ino for p in folder.glob("module_*.py")}
    run = Run.start(folder, model)
    last_replaced = None
    while run.process.poll() is None:
        if run.writing() and last_replaced is None and all(p.stat().st_ino != i for p, i in inodes.items()):
            last_replaced = time.monotonic()
        time.sleep(0.0005)
    assert run.process.returncode == 0, run.finish()
    assert run.first_write is not None
    return (last_replaced or time.monotonic()) - run.first_write, contents(folder)


def kill_while_writing(runs: list[Run], delays: list[float]) -> None:
    """SIGKILL each run `delay` seconds after its first write (or leave it if it ended before)."""
    pending = list(zip(runs, delays))
    while pending:
        for run, delay in list(pending):
            if run.process.poll() is not None:
                pending.remove((run, delay))
            elif run.writing() and time.monotonic() - run.first_write >= delay:  # type: ignore[operator]
                run.process.send_signal(signal.SIGKILL)
                run.process.wait()
                pending.remove((run, delay))
        time.sleep(0.0005)


@pytest.mark.slow
def test_sigkill_during_refactor_write_leaves_every_file_old_or_new(tiny_dream: Path, tmp_path: Path) -> None:
    folders = [tmp_path / f"lane{lane}" for lane in range(LANES)]
    for folder in folders:
        folder.mkdir()
    window, new = calibrate(folders[0], tiny_dream)
    originals = write_originals(folders[0])
    rng = random.Random(SEED)
    mixed = 0
    left_behind = 0
    for first in range(0, TRIALS, LANES):
        for folder in folders:
            write_originals(folder)
        runs = [Run.start(folder, tiny_dream) for folder in folders]
        kill_while_writing(runs, [rng.uniform(0, window) for _ in runs])
        for trial, run in enumerate(runs, first):
            after = contents(run.folder)
            states = {"old" if after[n] == originals[n] else "new" if after[n] == new[n] else "torn" for n in originals}
            assert "torn" not in states, f"trial {trial} (seed {SEED}): a file is neither old nor new"
            mixed += states == {"old", "new"}
            left_behind += len(temps(run.folder))
    print(f"\n{TRIALS} kills in a {window * 1000:.0f} ms write window: {mixed} left old and new files side by side,"
          f" {left_behind} temp files left behind")
    assert mixed >= 2, f"only {mixed} of {TRIALS} kills landed mid-write (window {window:.3f} s)"

    for folder in folders:  # the next run removes what the killed ones left
        # old files again: the random model's new text may hold a NUL byte, which the CLI refuses to read
        write_originals(folder)
        final = Run.start(folder, tiny_dream)
        assert final.process.wait(timeout=300) == 0, final.finish()
        assert contents(folder) == new
        assert temps(folder) == [], "the next run left temp files of killed runs behind"

    write_originals(folders[0])
    rolled_back = Run.start(folders[0], tiny_dream, "--check", "exit 3")
    stderr = rolled_back.finish()
    assert rolled_back.process.returncode == 1 and "restored 50 files" in stderr, stderr
    assert contents(folders[0]) == originals
    assert temps(folders[0]) == []
