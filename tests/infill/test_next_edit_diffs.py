"""A client's edit history as unified diffs or two versions, turned into `DocEdit`s (`diff_history`), and the
next edits a client's window keeps (`rewrite`), without a model."""

from __future__ import annotations

import pytest

from infill.next_edit.candidates import Region
from infill.next_edit.diff_history import diff_history, file_diffs, line_edits, same_file
from infill.next_edit.patches import PatchError
from infill.next_edit.rewrite import applied, inside
from infill.next_edit.suggest import NextEdit
from tests.support.next_edit_sample import NEW, OLD, VIEWS

EDITED = VIEWS.replace(OLD + '({"error"', NEW + '({"error"', 1)
LINES, EDITED_LINES = VIEWS.split("\n"), EDITED.split("\n")


def diff(path: str, line: int, old: str, new: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -{line + 1},1 +{line + 1},1 @@\n-{old}\n+{new}\n"


def test_two_versions_are_one_edit_per_run_of_changed_lines_the_one_at_the_cursor_last() -> None:
    after = EDITED.replace("self.store.remove(user_id)", "self.store.drop(user_id)")
    edits = line_edits("u", VIEWS, after)
    assert [e.line for e in edits] == [7, 11]
    for edit in edits:  # offsets in the text after the edits
        assert after[edit.start : edit.end] == edit.new_lines
    at_cursor = line_edits("u", VIEWS, after, cursor=after.index("render"))
    assert [e.line for e in at_cursor] == [11, 7] and at_cursor[-1].removed == {"JsonResponse"}
    assert line_edits("u", VIEWS, VIEWS) == []


def test_a_diff_history_is_split_at_its_file_headers() -> None:
    history = diff("views.py", 7, LINES[7], EDITED_LINES[7]) + "--- /c:/work/app/util.py\n+++ /c:/work/app/util.py\n" \
        "@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"
    sections = file_diffs(history)
    assert [s.path for s in sections] == ["views.py", "/c:/work/app/util.py"]
    assert [s.path for s in file_diffs("@@ -1,1 +1,1 @@\n-a\n+b\n")] == [""]  # hunks without headers
    with pytest.raises(PatchError, match="no hunk"):
        file_diffs("--- a/x.py\n+++ b/x.py\nnot a hunk\n")


def test_paths_name_the_same_file_when_one_ends_the_other() -> None:
    assert same_file("views.py", "/home/me/app/views.py") and same_file("file:///c:/app/views.py", "app/views.py")
    assert same_file("", "views.py") and same_file("C:\\app\\views.py", "app/views.py")
    assert not same_file("views.py", "app/oldviews.py") and not same_file("a/views.py", "b/views.py")


def test_the_current_file_s_diffs_are_taken_back_out_newest_first() -> None:
    first = VIEWS.replace("self.store.remove(user_id)", "self.store.drop(user_id)")
    now = first.replace(OLD + '({"error"', NEW + '({"error"', 1)
    history = (diff("views.py", 11, LINES[11], first.split("\n")[11])
               + "--- util.py\n+++ util.py\n@@ -3,1 +3,1 @@\n-x = 1\n+x = 2\n"
               + diff("views.py", 7, LINES[7], now.split("\n")[7]))
    edits = diff_history("file:///views.py", "views.py", now, history)
    assert [(e.uri, e.line) for e in edits] == [("file:///views.py", 11), ("util.py", 2), ("file:///views.py", 7)]
    newest = edits[-1]
    assert now[newest.start : newest.end] == newest.new_lines and newest.added == {"self", ".", "render"}
    assert edits[0].old_lines.strip() == "self.store.remove(user_id)"

    stale = diff("views.py", 3, "no such line", "class UserView(View):")  # an older diff that no longer matches
    edits = diff_history("file:///views.py", "views.py", now, stale + diff("views.py", 7, LINES[7], now.split("\n")[7]))
    assert [e.line for e in edits] == [3, 7] and edits[0].old_lines == "no such line\n"
    with pytest.raises(PatchError, match="newest diff of views.py does not match"):
        diff_history("file:///views.py", "views.py", VIEWS, diff("views.py", 7, LINES[7], EDITED_LINES[7]))


def test_a_window_keeps_the_edits_inside_it_and_applies_them() -> None:
    text = "a = old\nb = old\nc = old\n"
    region = Region("u", 0, 0, "echo")

    def edit(start: int, end: int, new: str, uri: str = "u") -> NextEdit:
        return NextEdit(uri, start, end, new, text[start:end], region, 1.0, "model")

    start, end = text.index("b"), text.index("\nc")  # the window: line 1 without its line break
    whole_line = edit(start, end + 1, "b = new\n")  # takes the break after the window, and writes one
    kept = inside([edit(4, 7, "new"), whole_line, edit(start + 4, end, "new", "v"), edit(end + 1, end + 4, "x")],
                  "u", text, start, end)
    assert [(e.start, e.end, e.new_text) for e in kept] == [(start, end, "b = new")]
    assert inside([edit(start, end + 1, "b = new")], "u", text, start, end) == []  # would eat the break
    assert applied(text, [edit(4, 7, "new"), edit(12, 15, "new")]) == "a = new\nb = new\nc = old\n"
