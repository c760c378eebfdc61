"""`dcomplete` as a subprocess: bad input, patches, --write atomicity, --json, refactor --check.

The model is a tiny random checkpoint (its text is noise that never parses, hence --allow-errors).
"""

from __future__ import annotations

import ast
import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infill.holes import find_holes

DCOMPLETE = Path(sys.executable).with_name("dcomplete")
COMMAND = [str(DCOMPLETE)] if DCOMPLETE.exists() else [sys.executable, "-m", "cli"]
ROOT = Path(__file__).resolve().parents[1]

SOURCE = 'import os\n\n\ndef greet(name):\n    """Say hello 👋 to 世界."""\n    return f"hi {name}"\n\n\nprint(greet("x"))\n'
HOLES = "def double(x):\n    # <|hole:6|>\n\n\ndef test_double():\n    assert double(2) == 4\n"


def dcomplete(*args: str, cwd: Path, timeout: float = 240, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*COMMAND, *args], check=False, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env,
        input=stdin,
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "holes.py").write_text(HOLES, encoding="utf-8")
    (tmp_path / "app.py").chmod(0o640)
    return tmp_path


def test_help_lists_subcommands_and_examples(workdir: Path) -> None:
    run = dcomplete("--help", cwd=workdir)
    assert run.returncode == 0
    assert "infill" in run.stdout and "refactor" in run.stdout and "examples:" in run.stdout
    run = dcomplete("infill", "--help", cwd=workdir)
    assert run.returncode == 0 and "patch -p1" in run.stdout


def test_refactor_without_spots_exits_0_before_loading_a_model(workdir: Path) -> None:
    before = snapshot(workdir)
    run = dcomplete("refactor", "app.py", "--holes", "--write", "--model", "no-such-model", cwd=workdir)
    assert run.returncode == 0 and "nothing to regenerate in 1 files" in run.stderr
    assert snapshot(workdir) == before


BAD_INPUTS = [
    (["infill", "missing.py:1"], "missing.py: no such file"),
    (["infill", "folder:1"], "folder: is a directory"),
    (["infill", "blob.py:1"], "blob.py: binary file"),
    (["infill", "latin.py:1"], "latin.py: not UTF-8"),
    (["infill", "app.py:99"], "app.py:99"),
    (["infill", "app.py:5-3"], "END 3 is before START 5"),
    (["infill", "app.py:1", "--language", "cobol"], "--language: unsupported language 'cobol'"),
    (["infill", "app.py:2", "--length", "0"], "--length 0"),
    (["infill", "app.py:2", "--threshold", "3"], "threshold"),
    (["refactor", "app.py"], "needs --lines"),
    (["refactor", "app.py", "--query", "(function_definition"], "does not compile"),
    (["refactor", "--lines", "app.py:4-40"], "app.py:4-40"),
    (["refactor", "app.py", "--holes", "--batch", "0"], "--batch 0"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUTS, ids=[" ".join(a) for a, _ in BAD_INPUTS])
def test_bad_input_exits_2_and_touches_nothing(workdir: Path, args: list[str], message: str) -> None:
    (workdir / "folder").mkdir()
    (workdir / "blob.py").write_bytes(b"x = 1\n\0\0\0binary")
    (workdir / "latin.py").write_bytes("x = 'é'\n".encode("latin-1"))
    (workdir / "notes.txt").write_text("hello\n")
    before = snapshot(workdir)
    run = dcomplete(*args, "--write", cwd=workdir)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], run.stderr
    assert snapshot(workdir) == before


@pytest.mark.slow
def test_unknown_model_exits_2(workdir: Path) -> None:
    before = snapshot(workdir)
    run = dcomplete("infill", "app.py:2", "--model", "no-such-model", "--write", cwd=workdir)
    assert run.returncode == 2
    assert "no-such-model" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert snapshot(workdir) == before


@pytest.mark.slow
def test_bundled_default_model_serves_the_cli(workdir: Path) -> None:
    run = dcomplete("infill", "app.py:6-6", "--json", "--retries", "0", cwd=workdir)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["stats"]["forward_passes"] > 0 and len(result["canvas_ids"]) > 10


@pytest.mark.slow
def test_bundled_model_fills_the_readme_holes_with_code_that_parses(tmp_path: Path) -> None:
    """What the README shows: `dcomplete refactor tests/fixtures/holes.py --holes` replaces both holes,
    in one patch, and the file still parses."""
    source = (ROOT / "tests" / "fixtures" / "holes.py").read_text()
    (tmp_path / "holes.py").write_text(source)
    run = dcomplete("refactor", "holes.py", "--holes", "--write", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    filled = (tmp_path / "holes.py").read_text()
    assert len(find_holes(source)) == 2 and find_holes(filled) == []
    ast.parse(filled)


@pytest.mark.slow
def test_file_line_completes_after_that_line(workdir: Path, tiny_dream: Path) -> None:
    run = dcomplete("infill", "app.py:4", "--json", "--allow-errors", "--retries", "0", "--model",
                    str(tiny_dream), cwd=workdir)
    assert run.returncode == 0, run.stderr
    edits = json.loads(run.stdout)["edits"]
    end_of_def = {"line": 3, "character": len("def greet(name):")}
    assert len(edits) == 1
    assert edits[0]["range"]["start"] == end_of_def == edits[0]["range"]["end"]  # an insertion


def test_file_line_on_a_complete_line_says_so(workdir: Path) -> None:
    before = snapshot(workdir)
    run = dcomplete("infill", "app.py:6", "--model", "no-such-model", cwd=workdir)
    assert run.returncode == 0 and run.stdout == ""
    assert "nothing to complete" in run.stderr and "app.py:6-6" in run.stderr
    assert snapshot(workdir) == before


def apply_lsp_edits(text: str, edits: list[dict]) -> str:
    """Apply LSP edits, converting UTF-16 positions independently of infill.positions."""
    lines = text.split("\n")

    def offset(position: dict) -> int:
        before = sum(len(line) + 1 for line in lines[: position["line"]])
        units = lines[position["line"]].encode("utf-16-le")[: 2 * position["character"]]
        return before + len(units.decode("utf-16-le"))

    for edit in sorted(
        edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True
    ):
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["new_text"] + text[end:]
    return text


@pytest.mark.slow
def test_patch_json_and_write_agree(workdir: Path, tiny_dream: Path) -> None:
    common = [
        "infill",
        "app.py:5-6",
        "--model",
        str(tiny_dream),
        "--seed",
        "7",
        "--allow-errors",
        "--retries",
        "0",
    ]
    diff = dcomplete(*common, cwd=workdir)
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.startswith("--- a/app.py\n+++ b/app.py\n")
    patched = workdir / "patched"
    patched.mkdir()
    shutil.copy(workdir / "app.py", patched / "app.py")
    applied = subprocess.run(
        ["patch", "-p1", "--batch"],
        input=diff.stdout,
        cwd=patched,
        capture_output=True,
        text=True,
        check=False,
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr

    as_json = dcomplete(*common, "--json", cwd=workdir)
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["file"] == "app.py" and result["stats"]["forward_passes"] > 0
    (edit,) = result["edits"]
    assert edit["range"]["start"] == {"line": 4, "character": 0}
    assert edit["range"]["end"] == {"line": 6, "character": 0}
    assert edit["token_ids"] and result["canvas_ids"].count(edit["token_ids"][0]) >= 0
    expected = apply_lsp_edits(SOURCE, result["edits"])

    written = dcomplete(*common, "--write", cwd=workdir)
    assert written.returncode == 0, written.stderr
    assert written.stdout == ""
    assert (workdir / "app.py").read_text(encoding="utf-8") == expected
    assert (patched / "app.py").read_text(encoding="utf-8") == expected
    assert (workdir / "app.py").stat().st_mode & 0o777 == 0o640
    assert not [p for p in workdir.iterdir() if "dcomplete-tmp" in p.name]


@pytest.mark.slow
def test_killed_write_leaves_the_file_whole(workdir: Path, tiny_dream: Path) -> None:
    original = (workdir / "app.py").read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [
            *COMMAND,
            "infill",
            "app.py:5-6",
            "--model",
            str(tiny_dream),
            "--write",
            "--allow-errors",
            "-v",
            "--sampler",
            "reference",
            "--steps",
            "5000",
            "--length",
            "600",
        ],
        cwd=workdir,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 180
    for line in process.stderr:
        if "denoising" in line or time.monotonic() > deadline:
            break
    time.sleep(1.0)
    assert process.poll() is None, "the run ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert (workdir / "app.py").read_bytes() == original
    assert not [p for p in workdir.iterdir() if "dcomplete-tmp" in p.name]


def run_with_terminal_stderr(argv: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run with stderr on a pseudo-terminal (the progress bar only draws on a terminal)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        run = subprocess.run(
            argv,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            env=env,
            timeout=240,
            check=False,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    return run, b"".join(chunks).decode("utf-8", errors="replace")


@pytest.mark.slow
def test_refactor_patch_write_and_failed_check_restores(workdir: Path, tiny_dream: Path) -> None:
    common = [
        "refactor",
        "app.py",
        "holes.py",
        "--holes",
        "--lines",
        "app.py:9",
        "--model",
        str(tiny_dream),
        "--allow-errors",
        "--retries",
        "0",
    ]
    diff, terminal = run_with_terminal_stderr([*COMMAND, *common], workdir)
    assert diff.returncode == 0, terminal
    assert "\r[" in terminal and "2/2 files" in terminal, terminal
    assert "+++ b/app.py" in diff.stdout and "+++ b/holes.py" in diff.stdout
    copy = workdir / "copy"
    copy.mkdir()
    for name in ("app.py", "holes.py"):
        shutil.copy(workdir / name, copy / name)
    applied = subprocess.run(
        ["patch", "-p1", "--batch"], input=diff.stdout, cwd=copy, capture_output=True, text=True, check=False
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "<|hole" not in (copy / "holes.py").read_text()

    originals = snapshot(workdir)
    passed = dcomplete(*common, "--write", "--check", "test -e app.py", cwd=workdir)
    assert passed.returncode == 0, passed.stderr
    for name in ("app.py", "holes.py"):
        assert (workdir / name).read_bytes() == (copy / name).read_bytes()
        (workdir / name).write_bytes(originals[name])

    before = snapshot(workdir)
    check = dcomplete(*common, "--write", "--check", "test ! -e app.py", cwd=workdir)
    assert check.returncode == 1
    assert check.stderr.strip().splitlines()[-1].startswith("dcomplete: check 'test ! -e app.py' failed")
    assert snapshot(workdir) == before
