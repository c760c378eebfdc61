"""Code action menus, command argument checks, and the shape of the applied edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

from infill.feedback import FeedbackLog
from lsp_server.actions import (
    BadCommandArguments,
    Range,
    RegenerateArgs,
    code_actions,
    parse_arguments,
    selected_lines,
    workspace_edit,
)
from lsp_server.inference import Replacement

TEXT = "def f():\n    # <|hole|>\n\nx = '# <|hole|>'\n"


def _range(a: int, b: int, c: int, d: int) -> types.Range:
    return types.Range(types.Position(a, b), types.Position(c, d))


def test_menu_depends_on_the_selection_the_holes_and_the_requested_kinds() -> None:
    titles = [a.command.command for a in code_actions("u", _range(0, 0, 1, 0), TEXT, "python", None)]
    assert titles == ["dcomplete.regenerateSelection", "dcomplete.refactorSelection", "dcomplete.fillHoles"]
    assert [a.command.command for a in code_actions("u", _range(0, 0, 0, 0), TEXT, "python", None)] == [
        "dcomplete.fillHoles"
    ]
    no_real_hole = "x = '# <|hole|>'\n"  # inside a string: not a marker
    assert code_actions("u", _range(0, 0, 0, 0), no_real_hole, "python", None) == []
    assert code_actions("u", _range(0, 0, 1, 0), TEXT, "python", [types.CodeActionKind.QuickFix]) == []
    assert len(code_actions("u", _range(0, 0, 1, 0), TEXT, "python", ["refactor"])) == 3


def test_selected_lines_are_one_based_and_skip_a_trailing_column_zero() -> None:
    def lines(a: int, b: int, c: int, d: int) -> tuple[int, int]:
        return selected_lines(
            parse_arguments(
                "c",
                (
                    {
                        "uri": "u",
                        "range": {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}},
                    },
                ),
                RegenerateArgs,
            ).range
        )

    assert lines(2, 0, 5, 0) == (3, 5)
    assert lines(2, 4, 5, 1) == (3, 6)
    assert lines(2, 3, 2, 3) == (3, 3)


def test_bad_command_arguments_name_the_problem() -> None:
    with pytest.raises(BadCommandArguments, match="takes one object argument, got 2"):
        parse_arguments("dcomplete.fillHoles", ({}, {}), RegenerateArgs)
    with pytest.raises(BadCommandArguments, match=r"missing required field `range`"):
        parse_arguments("dcomplete.regenerateSelection", ({"uri": "u"},), RegenerateArgs)
    assert isinstance(
        parse_arguments(
            "c", ({"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},), Range
        ),
        Range,
    )


def test_one_workspace_edit_carries_every_spot_in_utf16_units() -> None:
    text = "a = '😀'\nb = 1\n"
    spots = [Replacement(text.index("1"), text.index("1") + 1, "2"), Replacement(5, 6, "你")]
    edit = workspace_edit("file:///a.py", 7, text, spots, "utf-16", versioned=True)
    [change] = edit.document_changes
    assert change.text_document.version == 7
    assert [(e.range.start.character, e.range.end.character, e.new_text) for e in change.edits] == [
        (5, 7, "你"),
        (4, 5, "2"),
    ]
    unversioned = workspace_edit("file:///a.py", 7, text, spots, "utf-8", versioned=False)
    assert [e.range.end.character for e in unversioned.changes["file:///a.py"]] == [9, 5]


def test_feedback_counts_accepts_and_superseded_offers(tmp_path: Path) -> None:
    log = FeedbackLog(tmp_path / "state" / "feedback.jsonl")
    log.offered("u", ["a", "b"])
    log.accept("u", "a")
    log.offered("u", ["c"])  # "b" was never accepted
    events = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert [(e["event"], e["itemId"]) for e in events] == [("accepted", "a"), ("rejected", "b")]
    assert (log.accepted, log.rejected) == (1, 1)
