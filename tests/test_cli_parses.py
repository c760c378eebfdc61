"""Issue 22 at the CLI, with the bundled model: `dcomplete infill --write` and `refactor --holes --write`
never leave a file that parsed (or would have, but for its hole markers) failing Python's own parser."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from infill.holes import find_holes
from tests.test_cli import dcomplete

pytestmark = pytest.mark.slow

# a blank line inside a function, where the httpx case wrote `if "query" in kwargs:` and no body
URLPARSE = '''def urlparse(url: str = "", **kwargs: str) -> dict:
    parts = {"url": url}
    for key in ("scheme", "host", "path"):
        parts[key] = kwargs.get(key, "")

    return parts
'''
# a hole that is a body's only statement: the file parses only once the hole is filled with a statement
ONLY_STATEMENT = '''def clamp(value: int, low: int, high: int) -> int:
    # <|hole|>


def test_clamp() -> None:
    assert clamp(5, 0, 3) == 3
'''


@pytest.mark.parametrize("where", ["urlparse.py:4", "urlparse.py:5", "urlparse.py:2-2"])
def test_infill_write_keeps_the_file_parsing(tmp_path: Path, where: str) -> None:
    (tmp_path / "urlparse.py").write_text(URLPARSE)
    run = dcomplete("infill", where, "--write", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    ast.parse((tmp_path / "urlparse.py").read_text())


def test_refactor_fills_a_hole_only_statement_with_code_that_parses_or_keeps_the_marker(tmp_path: Path) -> None:
    (tmp_path / "clamp.py").write_text(ONLY_STATEMENT)
    run = dcomplete("refactor", "clamp.py", "--holes", "--write", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    filled = (tmp_path / "clamp.py").read_text()
    if find_holes(filled):
        assert filled == ONLY_STATEMENT and "does not parse" in run.stderr + run.stdout
    else:
        ast.parse(filled)
