"""`dcomplete infill` and `refactor` as subprocesses with the bundled model, in a project whose other file
defines what the edited file calls: the context is used unless --no-context, and -v lists its chunks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_cli import dcomplete

SHAPES = '''def scaled_box(corner_left, corner_top, stretch_factor):
    """A box with its top-left corner at (corner_left, corner_top), scaled by stretch_factor."""
    width = 10 * stretch_factor
    return (corner_left, corner_top, corner_left + width, corner_top + width)
'''
MAIN = "from shapes import scaled_box\n\n\ndef draw():\n    box = scaled_box(corner_left=\n"
HOLES = "from shapes import scaled_box\n\n\ndef draw():\n    # <|hole|>\n\n\ndef redraw():\n    # <|hole|>\n"
LISTED = "dcomplete:   definition shapes.py:1  def scaled_box(corner_left, corner_top, stretch_factor):"
NAMES = ("corner_top", "stretch_factor")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'drawing'\n")
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "holes.py").write_text(HOLES)
    return tmp_path


def test_infill_calls_a_function_of_the_project_with_its_argument_names(project: Path) -> None:
    run = dcomplete("infill", "main.py:5", "-v", cwd=project)
    assert run.returncode == 0, run.stderr
    assert "dcomplete: main.py: context of 1 chunks" in run.stderr and LISTED in run.stderr.splitlines()
    assert all(f"{name}=" in run.stdout for name in NAMES), run.stdout


def test_no_context_leaves_the_project_out(project: Path) -> None:
    run = dcomplete("infill", "main.py:5", "-v", "--no-context", cwd=project)
    assert run.returncode == 0, run.stderr
    assert "context of" not in run.stderr and "definition" not in run.stderr
    assert "+    box = scaled_box(corner_left=" in run.stdout
    assert not any(name in run.stdout for name in NAMES), run.stdout


def test_refactor_builds_the_context_once_per_file_into_its_canvas(project: Path) -> None:
    run = dcomplete("refactor", "holes.py", "--holes", "-v", "--json", "--context-tokens", "64", cwd=project)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    built = [re.fullmatch(r"dcomplete: holes.py: context of 1 chunks, (\d+) tokens", line) for line in lines
             if "context of" in line]
    assert len(built) == 1 and built[0] and int(built[0][1]) <= 64, lines
    assert LISTED in lines
    plain = dcomplete("refactor", "holes.py", "--holes", "--json", "--no-context", cwd=project)
    [with_context], [without] = (json.loads(r.stdout)["files"] for r in (run, plain))
    assert len(with_context["canvas_ids"]) - len(without["canvas_ids"]) == int(built[0][1])


def test_a_negative_context_budget_is_bad_input(project: Path) -> None:
    run = dcomplete("infill", "main.py:5", "--context-tokens", "-1", "--model", "no-such-model", cwd=project)
    assert run.returncode == 2 and run.stderr.strip() == "dcomplete: --context-tokens -1: must be at least 0"
