"""Next edits on huge inputs, without a model: the bounded diff (`diff_runs`) gives difflib's runs on small
input and a valid diff on any input, two versions of a 200,000-line file give the edits where they differ, a
diff with many hunks is taken back out, a paste is compared no further, and the crop around an edit keeps
its offsets and lines."""

from __future__ import annotations

import difflib
import random

import pytest

from infill.next_edit.candidates import Region
from infill.next_edit.crop import around_edit, follows
from infill.next_edit.diff_history import MOST_EDITS, line_edits
from infill.next_edit.diff_runs import SMALL, changed_runs
from infill.next_edit.edits import EDIT_CHARS, edit_between, replacements
from infill.next_edit.patches import PatchError, before_patch
from infill.next_edit.rule import replacement
from infill.reach import START_GRID
from tests.support.next_edit_sample import NEW, OLD, VIEWS

EDITED = VIEWS.replace(OLD + '({"error"', NEW + '({"error"', 1)
FILLER = ["x = 1\n", "y = [2, 3]\n", "# a note\n", "\n"]
N = 100_000


def filler(lines: int, start: int = 0) -> str:
    return "".join(FILLER[(start + i) % len(FILLER)] for i in range(lines))


def applied(a: list[object], b: list[object], runs: list[tuple[int, int, int, int]]) -> list[object]:
    """`a` with the runs replaced by `b`'s, checking that what lies between them is equal on both sides."""
    out: list[object] = []
    done = 0
    for i1, i2, j1, j2 in runs:
        assert done <= i1 <= i2 and a[done:i1] == b[len(out) : len(out) + i1 - done]
        out += a[done:i1] + b[j1:j2]
        done = i2
    return out + a[done:]


@pytest.mark.parametrize("seed", range(40))
def test_the_runs_are_difflib_s_on_small_input_and_turn_a_into_b_on_any(seed: int) -> None:
    rng = random.Random(seed)
    size, alphabet = rng.choice([(8, 3), (60, 2), (400, 5), (3000, 50), (3000, 10**6)])
    a: list[object] = [rng.randrange(alphabet) for _ in range(size)]
    b = list(a)
    for _ in range(rng.randint(1, 30)):
        at = rng.randrange(len(b) + 1)
        b[at:at + rng.randint(0, 3)] = [rng.randrange(alphabet) for _ in range(rng.randint(0, 3))]
    runs = changed_runs(a, b)
    assert applied(a, b, runs) == b
    if len(a) * len(b) <= SMALL:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        assert runs == [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def test_repetitive_input_that_difflib_takes_minutes_on_is_one_run() -> None:
    old: list[object] = ["x", "=", "1"] * 5000
    new: list[object] = ["y", "=", "2"] * 5000
    assert changed_runs(old, new) == [(0, len(old), 0, len(new))]  # no token occurs once: no anchor to split at
    new[7000:7000] = ["unique"]
    runs = changed_runs(old, new)
    assert applied(old, new, runs) == new


def test_two_versions_of_a_huge_file_give_the_edits_where_they_differ() -> None:
    before = filler(N) + VIEWS + filler(N, 1)
    after = filler(N) + EDITED.replace("self.store.remove", "self.store.drop") + filler(N, 1)
    edits = line_edits("u", before, after, cursor=after.index(NEW))
    assert [e.line for e in edits] == [N + 11, N + 7]  # in file order, the one at the cursor last
    assert edits[-1].removed == {OLD} and after[edits[-1].start : edits[-1].end] == edits[-1].new_lines
    assert after[edits[0].start : edits[0].end] == "        self.store.drop(user_id)\n"

    many = "".join(f"v{i} = {i}\n" for i in range(2 * N))
    changed = many.replace("7\n", "8\n")  # every tenth line: 20,000 edits
    near = line_edits("u", many, changed, cursor=changed.index("v150007 ="))
    assert len(near) == MOST_EDITS and near[-1].line == 150_007
    assert all(changed[e.start : e.end] == e.new_lines and e.new_lines.endswith("8\n") for e in near)


def test_a_diff_with_many_hunks_is_taken_back_out_and_overlapping_hunks_are_named() -> None:
    before = "".join(f"line {i}\n" for i in range(50_000))
    after = before.replace("0\n", "0 changed\n")
    diff = "".join(f"@@ -{i + 1},1 +{i + 1},1 @@\n-line {i}\n+line {i} changed\n" for i in range(0, 50_000, 10))
    assert before_patch(after, diff) == before
    with pytest.raises(PatchError, match="overlaps"):
        before_patch("a\nb\n", "@@ -1,2 +1,2 @@\n-a\n-b\n+a\n+b\n@@ -2,1 +2,1 @@\n-b\n+b\n")


def test_a_paste_is_not_compared_token_by_token_and_no_next_edit_follows_it() -> None:
    pasted = "value = compute(1)\n" * (EDIT_CHARS // 10)
    edit = edit_between("u", VIEWS, VIEWS + pasted)
    assert edit is not None and edit.changes == () and not follows(edit)
    assert replacements("a = 1\n", pasted) == () and replacement("a = 1\n", "b = 1\n" + pasted) is None
    typed = edit_between("u", VIEWS, EDITED)
    assert typed is not None and follows(typed) and typed.removed == {OLD}


def test_the_crop_around_an_edit_keeps_it_at_its_place() -> None:
    text = filler(N) + EDITED + filler(N, 1)
    edit = line_edits("u", filler(N) + VIEWS + filler(N, 1), text)[-1]
    cut = around_edit(text, edit, 5000)
    assert len(cut.text) < 12_000 and cut.lines % START_GRID == 0 and text[cut.offset :].startswith(cut.text)
    assert cut.lines == text.count("\n", 0, cut.offset)
    moved = cut.edit_in(edit)
    assert cut.text[moved.start : moved.end] == edit.new_lines and cut.text.split("\n")[moved.line] + "\n" == edit.new_lines
    region = Region("u", moved.line + 1, moved.line + 1, "echo", moved.end, moved.end + 8)
    whole = cut.region_out(region)
    assert text[whole.start : whole.end] == cut.text[region.start : region.end] and whole.first == edit.line + 1
    assert around_edit(VIEWS, edit_between("u", VIEWS, EDITED) or edit, 5000).text == VIEWS  # short: kept whole
