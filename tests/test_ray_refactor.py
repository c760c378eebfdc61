"""`dcomplete refactor --ray` as a subprocess against a local Ray cluster that this module starts
(`ray.init(num_cpus=2)` in the test process; each CLI run is a second driver connecting to it).

The model is a tiny random checkpoint; the reference sampler with --steps 80 makes each batch take a
second or two, long enough to kill an actor or interrupt the driver in the middle of the run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_cli import COMMAND, ROOT, dcomplete, run_with_terminal_stderr, snapshot

from tests.support.ray_cluster import local_cluster

FILES = 4
SLOW = ["--holes", "--allow-errors", "--retries", "0", "--sampler", "reference", "--steps", "80", "--batch", "2"]


def source(number: int) -> str:
    return (
        f"def scale_{number}(values):\n    # <|hole:12|>\n\n\n"
        f"def offset_{number}(value):\n    return value + {number}\n"
    )


def write_files(folder: Path, extra: dict[str, str] | None = None) -> Path:
    folder.mkdir()
    for number in range(FILES):
        (folder / f"m{number}.py").write_text(source(number), encoding="utf-8")
    for name, text in (extra or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def edits_by_file(stdout: str) -> dict[str, Any]:
    """Each file's edits and canvas (everything but the timings)."""
    return {f["file"]: (f["edits"], f["canvas_ids"], f["notes"]) for f in json.loads(stdout)["files"]}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with local_cluster() as address:
        yield address


@pytest.fixture(scope="module")
def local_edits(tmp_path_factory: pytest.TempPathFactory, tiny_dream: Path) -> dict[str, Any]:
    folder = write_files(tmp_path_factory.mktemp("local") / "src")
    run = dcomplete("refactor", ".", *SLOW, "--json", "--model", str(tiny_dream), cwd=folder)
    assert run.returncode == 0, run.stderr
    edits = edits_by_file(run.stdout)
    assert len(edits) == FILES and all(e[0] for e in edits.values())
    return edits


def ray_args(cluster: str, model: Path) -> list[str]:
    return ["--ray", cluster, "--ray-actors", "2", "--model", str(model)]


def _sigint_as_a_shell_gives_it() -> None:
    """A shell starts a command with SIGINT at its default and unblocked. By the time this test runs in the
    full suite, the test process may hold it ignored or blocked (something earlier in the suite; alone the
    test passed), which a child inherits through exec: the run then ignored Ctrl-C and finished."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_verbose(folder: Path, args: list[str]) -> tuple[subprocess.Popen[str], list[int], list[str]]:
    """A `-v` run; returns as soon as both actors have loaded the model and been sent their first batch,
    with the actors' pids."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = (folder.parent / "stdout.json").open("w")
    process = subprocess.Popen(
        [*COMMAND, "refactor", ".", *args, "-v"], cwd=folder, stdout=out, stderr=subprocess.PIPE,
        text=True, env=env, preexec_fn=_sigint_as_a_shell_gives_it,
    )
    assert process.stderr is not None
    pids, lines = [], []
    deadline = time.monotonic() + 180
    while sum("ray: actor" in line and " takes " in line for line in lines) < 2 and time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"ray: actor \d+ on .* \(pid (\d+)\) loaded", line)
        if found:
            pids.append(int(found.group(1)))
    assert len(pids) == 2 and process.poll() is None, "".join(lines)
    return process, pids, lines


def finish(process: subprocess.Popen[str], lines: list[str]) -> str:
    assert process.stderr is not None
    lines.extend(process.stderr.readlines())
    process.wait(timeout=240)
    return "".join(lines)


@pytest.mark.slow
def test_edits_on_ray_equal_a_local_run(
    tmp_path: Path, cluster: str, tiny_dream: Path, local_edits: dict[str, Any]
) -> None:
    """The model is named by a path relative to the driver's folder (actors have a cwd of their own)."""
    folder = write_files(tmp_path / "src")
    model = Path(os.path.relpath(tiny_dream, folder))
    run, terminal = run_with_terminal_stderr(
        [*COMMAND, "refactor", ".", *SLOW, "--json", *ray_args(cluster, model)], folder
    )
    assert run.returncode == 0, terminal
    assert edits_by_file(run.stdout) == local_edits
    assert f"{FILES}/{FILES} files" in terminal and "tok/s" in terminal, terminal


@pytest.mark.slow
def test_a_killed_actor_loses_no_file(
    tmp_path: Path, cluster: str, tiny_dream: Path, local_edits: dict[str, Any]
) -> None:
    folder = write_files(tmp_path / "src")
    process, pids, lines = start_verbose(folder, [*SLOW, "--json", *ray_args(cluster, tiny_dream)])
    os.kill(pids[0], signal.SIGKILL)
    stderr = finish(process, lines)
    assert process.returncode == 0, stderr
    assert "ray: actor 0 failed" in stderr and "files go back" in stderr, stderr
    assert "ray: actor 0 takes m0.py, m1.py\n" in stderr and "ray: actor 1 takes m2.py, m3.py\n" in stderr
    assert "ray: actor 1 takes m0.py, m1.py (again)" in stderr, stderr
    assert edits_by_file((tmp_path / "stdout.json").read_text()) == local_edits


@pytest.mark.slow
def test_a_file_the_engine_cannot_take_is_left_untouched_and_a_failed_check_restores_every_file(
    tmp_path: Path, cluster: str, tiny_dream: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """huge.py has a hole whose token budget is larger than the model's whole context: building its
    canvas fails on the actor (ContextOverflow), once on each actor. The --check command copies the
    folder as written (huge.py as it was, the others rewritten), then fails: every file is restored.

    The address comes from $DCOMPLETE_RAY_ADDRESS, and `--ray .` reads `.` as the PATH it is."""
    monkeypatch.setenv("DCOMPLETE_RAY_ADDRESS", cluster)
    huge = "def huge(x):\n    # <|hole:3000|>\n"
    folder = write_files(tmp_path / "src", {"huge.py": huge})
    before = snapshot(folder)
    check = "cp -r . ../written && false"
    run = dcomplete("refactor", "--ray", ".", *SLOW, "--write", "--check", check, "-v", "--ray-actors", "2",
                    "--model", str(tiny_dream), cwd=folder)
    assert run.returncode == 1, run.stderr
    assert re.search(r"huge\.py: left untouched: failed 2 times \(ContextOverflow: .*context", run.stderr), run.stderr
    assert "huge.py: ContextOverflow" in run.stderr and "trying again" in run.stderr
    assert f"1 of {FILES + 1} files failed" in run.stderr and f"rewrote {FILES} of {FILES + 1} files" in run.stderr
    written = snapshot(tmp_path / "written")
    assert written["huge.py"] == before["huge.py"] == huge.encode()
    assert all(written[name] != before[name] for name in before if name != "huge.py")
    lines = run.stderr.strip().splitlines()
    assert lines[-1] == f"dcomplete: check {check!r} failed (exit 1); restored {FILES} files"
    assert snapshot(folder) == before


@pytest.mark.slow
def test_ctrl_c_stops_the_actors_and_writes_nothing(tmp_path: Path, cluster: str, tiny_dream: Path) -> None:
    folder = write_files(tmp_path / "src")
    before = snapshot(folder)
    # Thousands of steps: on a quiet machine the tiny model finishes 80 before the signal arrives.
    process, pids, lines = start_verbose(folder, [*SLOW, "--steps", "4000", "--write", *ray_args(cluster, tiny_dream)])
    process.send_signal(signal.SIGINT)
    stderr = finish(process, lines)
    here = f"(this process: SIGINT {signal.getsignal(signal.SIGINT)}, blocked {signal.pthread_sigmask(signal.SIG_BLOCK, [])})"
    assert process.returncode == 130, stderr + here
    assert stderr.strip().splitlines()[-1] == "dcomplete: interrupted"
    assert snapshot(folder) == before
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()], "an actor outlived the interrupted run"


def test_ray_without_the_package_names_the_extra(tmp_path: Path) -> None:
    """`sys.modules['ray'] = None` makes `import ray` fail as if it were not installed."""
    folder = write_files(tmp_path / "src")
    before = snapshot(folder)
    hide_ray = "import sys; sys.modules['ray'] = None; from cli.main import main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", hide_ray, "refactor", ".", "--holes", "--write", "--ray", "--model", "no-such"],
        cwd=folder, capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert run.returncode == 2
    assert run.stderr.splitlines() == ["dcomplete: --ray needs the ray package: pip install 'dcomplete[ray]'"]
    assert snapshot(folder) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--ray-actors", "0"], "--ray-actors 0: must be at least 1"),
     (["--ray-gpus-per-actor", "-1"], "--ray-gpus-per-actor -1.0: must be at least 0"),
     (["127.0.0.1:1"], "--ray 127.0.0.1:1: no Ray cluster answers there")],
)
def test_bad_ray_options_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    folder = write_files(tmp_path / "src")
    before = snapshot(folder)
    run = dcomplete("refactor", ".", "--holes", "--write", "--ray", *args, "--model", "no-such", cwd=folder)
    assert run.returncode == 2, run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"dcomplete: {message}"), run.stderr
    assert snapshot(folder) == before


@pytest.mark.slow
def test_bench_runs_on_the_cluster(cluster: str, tiny_dream: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bench.ray_refactor reuses this process's connection; each way writes the same tokens."""
    from bench import ray_refactor

    ray_refactor.main(["--model", str(tiny_dream), "--files", "4", "--actors", "2"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["local_files_per_s"] > 0 and out["ray_2_files_per_s"] > 0
    local, pool = out["rows"]
    assert local["tokens"] == pool["tokens"] > 0 and local["failed"] == pool["failed"] == 0
