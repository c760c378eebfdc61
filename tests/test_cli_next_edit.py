"""`dcomplete next-edit` as a subprocess with the bundled model: the edit from two versions, from a diff on
stdin or from git, a diff printed or written atomically, and bad input as one line with exit status 2."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from infill.next_edit.patches import PatchError, before_patch
from tests.test_cli import dcomplete, snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "next_edit"  # the README's example
BEFORE = (FIXTURES / "views.py.orig").read_text(encoding="utf-8")
AFTER = (FIXTURES / "views.py").read_text(encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "views.py").write_text(AFTER, encoding="utf-8")
    (tmp_path / "views.py.orig").write_text(BEFORE, encoding="utf-8")
    return tmp_path


def test_a_patch_is_taken_back_out_of_the_file() -> None:
    diff = "--- a/views.py\n+++ b/views.py\n@@ -8,1 +8,1 @@\n-" + BEFORE.split("\n")[7] + "\n+" + AFTER.split("\n")[7] + "\n"
    assert before_patch(AFTER, diff) == BEFORE
    with pytest.raises(PatchError, match="does not match"):
        before_patch(AFTER, diff.replace("@@ -8,1 +8,1 @@", "@@ -3,1 +3,1 @@"))
    with pytest.raises(PatchError, match="no hunk"):
        before_patch(AFTER, "not a diff\n")


@pytest.mark.slow
def test_the_next_edit_is_printed_then_written(project: Path) -> None:
    run = dcomplete("next-edit", "views.py", "--before", "views.py.orig", "--aggressiveness", "high", cwd=project)
    assert run.returncode == 0, run.stderr
    assert "-        return JsonResponse" in run.stdout and "+        return self.render" in run.stdout
    diff = subprocess.run(["git", "diff", "--no-index", "--no-color", "views.py.orig", "views.py"], cwd=project,
                          capture_output=True, text=True).stdout
    written = dcomplete("next-edit", "views.py", "--patch", "-", "--aggressiveness", "high", "--write",
                        cwd=project, stdin=diff)
    assert written.returncode == 0 and written.stdout == "", written.stderr
    text = (project / "views.py").read_text(encoding="utf-8")
    assert text.count("self.render") == 2 and text.count("JsonResponse") == BEFORE.count("JsonResponse") - 2
    ast.parse(text)


def test_bad_input_is_one_line_and_exit_2(project: Path) -> None:
    before = snapshot(project)
    for args, named in ((["views.py", "--patch", "views.py.orig"], "views.py.orig"),
                        (["views.py"], "views.py"),  # not in a git checkout and nothing given
                        (["views.py", "--before", "views.py"], "views.py"),  # no change
                        (["missing.py", "--before", "views.py.orig"], "missing.py")):
        run = dcomplete("next-edit", *args, "--model", "no-such-model", cwd=project)
        assert run.returncode == 2, (args, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1 and named in run.stderr, run.stderr
    assert snapshot(project) == before
