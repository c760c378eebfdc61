"""Next edits over a 200,000-line file through `dcomplete engine` (the tiny random checkpoint) and `dcomplete
next-edit`: the README's rename (tests/fixtures/next_edit: `JsonResponse` renamed `self.render` on one line)
between 100,000 lines above and 100,000 below, at aggressiveness "high", where the rename rule's text is
shown wherever it applies and parses whatever a random model's margins. Mercury Edit's window, Tabby's next
version (from two whole versions of the file) and the CLI's diff carry the rename to the other calls, on the
right lines of the whole file, as on the file alone; the server answers a completion after. The file is cut
around the edit before anything diffs, parses or tokenizes it (`infill.next_edit.crop`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.support.engine_process import EngineProcess
from tests.support.next_edit_requests import continue_body, mercury_content, tabby_body
from tests.support.next_edit_sample import NEW, OLD
from tests.test_cli import dcomplete

FIXTURES = Path(__file__).parents[1] / "fixtures" / "next_edit"
BEFORE = (FIXTURES / "views.py.orig").read_text(encoding="utf-8")
AFTER = (FIXTURES / "views.py").read_text(encoding="utf-8")
LINE = AFTER.split("\n").index(next(line for line in AFTER.split("\n") if NEW in line))
FILLER = ["x = 1\n", "y = [2, 3]\n", "# a note\n", "\n"]  # lines that parse wherever the file is cut
N = 100_000
ABOVE = "".join(FILLER[i % 4] for i in range(N))
BELOW = "".join(FILLER[(i + 1) % 4] for i in range(N))
CARRIED = AFTER.replace(f"return {OLD}", f"return {NEW}")  # not the import: `import self.render` would not parse
TIMEOUT = 300


def diff(above: int) -> str:
    old, new = BEFORE.split("\n")[LINE], AFTER.split("\n")[LINE]
    return f"--- views.py\n+++ views.py\n@@ -{above + LINE + 1},1 +{above + LINE + 1},1 @@\n-{old}\n+{new}\n"


def mercury_window(server: EngineProcess, text: str, above: int) -> str:
    column = AFTER.split("\n")[LINE].index(NEW) + len(NEW)
    content = mercury_content(text, above + LINE, column, above + LINE, above + LINE + 5, [diff(above)])
    answer = httpx.post(server.url + "/v1/edit/completions", timeout=TIMEOUT,
                        json=continue_body(content, aggressiveness="high", stream=False))
    assert answer.status_code == 200, answer.text[:300]
    fenced = answer.json()["choices"][0]["message"]["content"]
    return str(fenced.removeprefix("```\n").removesuffix("\n```"))


def test_a_rename_in_a_200k_line_file_is_carried_on_its_lines(server: EngineProcess) -> None:
    huge = ABOVE + AFTER + BELOW
    assert huge.count("\n") > 200_000
    window = mercury_window(server, huge, N)
    assert window == "\n".join(CARRIED.split("\n")[LINE : LINE + 6]) == mercury_window(server, AFTER, 0)

    body = tabby_body(ABOVE + BEFORE + BELOW, "", huge, aggressiveness="high")
    body["segments"].update(prefix="", suffix="")  # the body stays under the 4 MB the server takes
    answer = httpx.post(server.url + "/v1/completions", json=body, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["choices"][0]["text"] == ABOVE + CARRIED + BELOW

    after = httpx.post(server.url + "/v1/completions", timeout=TIMEOUT,
                       json={"prompt": "def total(items):\n    return ", "suffix": "\n", "max_tokens": 4})
    assert after.status_code == 200 and isinstance(after.json()["choices"][0]["text"], str)


def test_the_cli_prints_the_rename_at_the_lines_of_the_whole_file(tmp_path: Path, tiny_anchored: Path) -> None:
    (tmp_path / "views.py").write_text(ABOVE + AFTER + BELOW, encoding="utf-8")
    (tmp_path / "views.py.orig").write_text(ABOVE + BEFORE + BELOW, encoding="utf-8")
    run = dcomplete("next-edit", "views.py", "--before", "views.py.orig", "--aggressiveness", "high",
                    "--model", str(tiny_anchored), cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("--- a/views.py"), run.stderr
    applied = subprocess.run(["patch", "-p1", "-s"], cwd=tmp_path, input=run.stdout, text=True, capture_output=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    nearest = AFTER.replace(f"return {OLD}(user", f"return {NEW}(user")  # the next call below the edit
    assert (tmp_path / "views.py").read_text(encoding="utf-8") == ABOVE + nearest + BELOW
