"""`dcomplete infill` / `refactor --engine-url` against a real `dcomplete engine`: the same edits as the
same model loaded in the CLI (the anchored family, so leads and span ends cross the wire too), and an
engine that cannot be reached is one line naming the URL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.engine_process import EngineProcess

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "def area(w, h):\n    result = w * h\n    return result\n\n\ndef total(xs):\n    return sum(xs)\n"
HOLES = (ROOT / "tests" / "fixtures" / "holes.py").read_text(encoding="utf-8")


def dcomplete(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DCOMPLETE_ENGINE_URL": ""}
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240, env=env, check=False)


def without_timing(output: str) -> list[dict]:
    """Each file's result (infill prints one, refactor a list), less the seconds it took and the forwards
    it ran: a step whose logits a cached text row already gave runs none, and what an engine has cached
    depends on the requests it served before (a server keeps documents across requests)."""
    answer = json.loads(output)
    files = answer["files"] if "files" in answer else [answer]
    for item in files:
        item["stats"].pop("seconds")
        item["stats"].pop("forward_passes")
    return files


@pytest.fixture(scope="module")
def engine(tiny_anchored: Path, float32_keys_everywhere: None):
    with EngineProcess(["--model", str(tiny_anchored)]) as process:
        yield process


@pytest.mark.parametrize("command", [["infill", "app.py:6"], ["refactor", "app.py", "holes.py", "--holes", "--lines", "app.py:2-3"]])
def test_remote_edits_equal_local_ones(engine: EngineProcess, tiny_anchored: Path, tmp_path: Path,
                                       command: list[str]) -> None:
    (tmp_path / "app.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "holes.py").write_text(HOLES, encoding="utf-8")
    local = dcomplete(*command, "--json", "--model", str(tiny_anchored), cwd=tmp_path)
    remote = dcomplete(*command, "--json", "--engine-url", engine.url, cwd=tmp_path)
    assert local.returncode == remote.returncode == 0, local.stderr + remote.stderr
    assert without_timing(remote.stdout) == without_timing(local.stdout)
    assert any(item["canvas_ids"] for item in without_timing(remote.stdout))


def test_an_unreachable_engine_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(SOURCE, encoding="utf-8")
    run = dcomplete("infill", "app.py:2-3", "--engine-url", "http://127.0.0.1:9", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "--engine-url" in run.stderr and "127.0.0.1:9" in run.stderr
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == SOURCE
