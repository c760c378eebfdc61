"""Issue 22 at the CLI, with the bundled model: `dcomplete infill --write` and `refactor --holes --write`
never leave a file that parsed (or would have, but for its hole markers) failing Python's own parser."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from infill.holes import find_holes
from infill.languages import get_language
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


# a blank line where only a header makes the file parse: its body is already there below it
MISSING_HEADER = '''def is_triple(items):
    """Return True when the list has exactly three items."""
    check = [x for x in items if x is not None]

        return True
    return False
'''
MISSING_OPENER = """function clamp(value, low, high) {
    if (value < low) {
        return low;
    }

        return high;
    }
    return value;
}
"""


@pytest.mark.parametrize(("name", "text", "opener"), [("triple.py", MISSING_HEADER, ":"),
                                                      ("clamp.js", MISSING_OPENER, "{")])
def test_infill_writes_the_missing_header_of_a_body(tmp_path: Path, name: str, text: str, opener: str) -> None:
    """The model's first line there is a statement (`return len(check) == 3`), which cannot parse; the
    retry held to the line's shape writes a header (line_shape)."""
    (tmp_path / name).write_text(text)
    run = dcomplete("infill", f"{name}:4" if name.endswith(".py") else f"{name}:5", "--write", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    filled = (tmp_path / name).read_text()
    written = filled.split("\n")[3 if name.endswith(".py") else 4]
    assert written.strip() and written.rstrip().endswith(opener), filled
    language = "python" if name.endswith(".py") else "javascript"
    assert not get_language(language).parse(filled).root_node.has_error
    if language == "python":
        ast.parse(filled)
