"""Issue 41 at the CLI, with the bundled model: a regenerated range that parses but no longer defines a name
the lines after it read is never written (infill.scope)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infill.languages import get_language
from infill.repair import baseline, check_filled
from infill.spots import Edit, apply_edits
from infill.windows import plan_regenerate
from tests.test_cli import dcomplete

pytestmark = pytest.mark.slow

# the shape of the user's report (npm's install completion, written anew): lines 4-5 bind two names that
# lines 6, 9 and 10 read
COMPLETE = """const completion = async (opts) => {
  const { partialWord } = opts
  const lastSlashIdx = partialWord.lastIndexOf('/')
  const partialName = partialWord.slice(lastSlashIdx + 1)
  const partialPath = partialWord.slice(0, lastSlashIdx)
  if (partialPath === '') {
    return []
  }
  const annotated = await readdir(partialPath)
  return annotated.filter(name => name.startsWith(partialName))
}
"""


@pytest.mark.parametrize("command", [("infill", "complete.js:4-5"),
                                     ("refactor", "complete.js", "--lines", "complete.js:4-5")])
def test_regenerated_lines_that_unbind_a_name_read_below_are_not_written(tmp_path: Path,
                                                                        command: tuple[str, ...]) -> None:
    (tmp_path / "complete.js").write_text(COMPLETE)
    run = dcomplete(*command, "--write", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout)
    result = output["files"][0] if "files" in output else output
    written = (tmp_path / "complete.js").read_text()
    spec = get_language("javascript")
    spot = plan_regenerate(COMPLETE, 4, 5, spec)
    original = baseline(COMPLETE, spec, [spot])
    assert {read.name for read in original.reads} == {"partialName", "partialPath"}
    edits: list[Edit | None] = [Edit(spot.start, spot.end, e["new_text"], ()) for e in result["edits"]] or [None]
    assert apply_edits(COMPLETE, [e for e in edits if e is not None]) == written
    assert check_filled(COMPLETE, edits, original, spec).added == 0  # whatever was written still binds both
    # The bundled model's greedy lines here bind neither name where they parse (three `const lastIndex = ...`
    # and a `return (...)` on the AMX Xeon, before and after its retries: the case the issue reports); the
    # Zen 4 EPYC rounds them into lines that do not parse. Either way nothing is written, and a note says why.
    assert written == COMPLETE
    reasons = {"line 4: dropped, the result no longer defines partialPath, which line 6 reads": 1,
               "line 4: dropped, the result does not parse": 0}
    said = [reason for reason in reasons if reason in run.stderr]
    assert len(said) == 1, run.stderr
    assert result["unbinding"] == reasons[said[0]]
