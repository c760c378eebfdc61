"""Truncated or corrupted checkpoint files: one line naming the file, never a traceback.

Each case breaks one file of a tiny checkpoint (weights, tokenizer, GGUF base, adapter) and loads it the
way the CLI and the server do; the CLI case checks the exit status and stderr of `dcomplete` itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine import Engine, ModelLoadError

ROOT = Path(__file__).resolve().parents[2]


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def scramble_header(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(b"\xff" * 64 + data[64:])


CASES: list[tuple[str, str, Callable[[Path], None]]] = [
    ("dream", "model.safetensors", truncate),
    ("dream", "model.safetensors", scramble_header),
    ("dream", "tokenizer.json", truncate),
    ("anchored", "base.gguf", truncate),
    ("anchored", "base.gguf", scramble_header),
    ("anchored", "adapter.safetensors", truncate),
]


@pytest.mark.parametrize(("family", "name", "damage"), CASES, ids=[f"{c[1]}-{c[2].__name__}" for c in CASES])
def test_a_broken_file_is_one_line_naming_it(
    family: str, name: str, damage: Callable[[Path], None], request: pytest.FixtureRequest, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path / "cache"))  # a GGUF base is converted afresh
    folder = tmp_path / "model"
    shutil.copytree(request.getfixturevalue(f"tiny_{family}"), folder)
    if family == "anchored":  # the config names the base by absolute path: point it at the copy
        config = (folder / "config.json").read_text().replace(str(request.getfixturevalue("tiny_anchored")), str(folder))
        (folder / "config.json").write_text(config)
    damage(folder / name)
    with pytest.raises(ModelLoadError) as caught:
        Engine.load(str(folder), device="cpu")
    message = str(caught.value)
    assert "\n" not in message and str(folder / name) in message, message


def test_the_cli_says_it_in_one_line_and_exits_2(tiny_dream: Path, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(tiny_dream, folder)
    truncate(folder / "model.safetensors")
    source = tmp_path / "app.py"
    source.write_text("def f(x):\n    return x\n")
    before = source.read_bytes()
    run = subprocess.run(
        [sys.executable, "-m", "cli", "infill", f"{source}:2-2", "--model", str(folder), "--write"],
        capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and str(folder / "model.safetensors") in lines[0], run.stderr
    assert source.read_bytes() == before
