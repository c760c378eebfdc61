"""Next edits end to end: a real headless Neovim with editors/nvim, the real `dcomplete serve` with the bundled
model. The user renames one `JsonResponse` call to `self.render` as they would (`ciw`, type, `<Esc>`); the
plugin asks `textDocument/copilotInlineEdit` when the burst ends and marks the place where the same change
is due; `<Tab>` jumps there, `<Tab>` again applies it and runs the item's command; typing hides it, `<Esc>`
dismisses it, and with nothing shown `<Tab>` keeps its own meaning (jump forward in the jumplist)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from editor_server import server_command, server_settings
from nvim_ghost import apply_text_edits
from nvim_session import NvimSession

from tests.support.next_edit_sample import NEW, OLD, VIEWS

EDITED_LINE = 8  # 1-based: `return JsonResponse({"error": ...` is where the user makes the change
FIRST_ANSWER_S = 300.0  # the bundled model loads first (tens of seconds on a busy 2-core machine)
ANSWER_S = 180.0

MARKS_LUA = """
local ns = vim.api.nvim_get_namespaces()['dcomplete.next_edit']
local out = {}
for _, m in ipairs(ns and vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true }) or {}) do
  local d, lines = m[4], {}
  for _, line in ipairs(d.virt_lines or {}) do
    lines[#lines + 1] = line[1][1]
  end
  out[#out + 1] = {
    row = m[2], col = m[3], end_row = d.end_row or vim.NIL, end_col = d.end_col or vim.NIL,
    hl = d.hl_group or vim.NIL, pos = d.virt_text_pos or vim.NIL,
    text = d.virt_text and d.virt_text[1][1] or vim.NIL, lines = lines,
  }
end
return out
"""


@pytest.fixture
def session(tmp_path: Path) -> Iterator[NvimSession]:
    log = tmp_path / "server.log"
    command = ["env", f"XDG_STATE_HOME={tmp_path / 'state'}", *server_command(log)]
    settings = {**server_settings("default"), "nextEdit": {"aggressiveness": "high"}}
    started = NvimSession.start(command, "extmark", settings, log)
    yield started
    started.close()


def marks(session: NvimSession) -> list[dict[str, Any]]:
    return session.lua(MARKS_LUA)


def cursor(session: NvimSession) -> tuple[int, int]:
    row, col = session.nvim.current.window.cursor
    return row, col


def shown(session: NvimSession) -> dict[str, Any] | None:
    item = session.lua("local s = require('dcomplete.next_edit').shown(0) return s and s.item or vim.NIL")
    return item or None


def lsp_version(session: NvimSession) -> int:
    return session.lua("return vim.lsp.util.buf_versions[vim.api.nvim_get_current_buf()]")


def answers(session: NvimSession) -> list[dict[str, Any]]:
    """The plugin's copilotInlineEdit requests the server answered, oldest first (cancelled ones too)."""
    return session.tap()["next_edits"]


def wait_shown(session: NvimSession, after: int, timeout: float) -> dict[str, Any]:
    """Waits for the answer to a request made after `after` answers, and for its edit on screen."""

    def ready() -> dict[str, Any] | None:
        done = [a for a in answers(session)[after:] if not a.get("err")]
        return shown(session) if done and done[-1]["result"]["edits"] else None

    item = session.wait_for(ready, timeout, "a next edit from the server on screen")
    assert item == answers(session)[-1]["result"]["edits"][0]
    return item


def expected_marks(text: str, item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The deletion mark and the new-text mark the plugin draws for `item` (ASCII text: columns agree)."""
    start, end = item["range"]["start"], item["range"]["end"]
    deletion = {"row": start["line"], "col": start["character"], "end_row": end["line"],
                "end_col": end["character"], "hl": "DcompleteNextEditDelete"}
    if "\n" not in item["text"] and start["line"] == end["line"]:
        return deletion, {"row": start["line"], "col": end["character"], "pos": "inline", "text": item["text"]}
    lines = text.split("\n")
    after = apply_text_edits(text, [{"range": item["range"], "newText": item["text"]}]).split("\n")
    rows = after[start["line"] : start["line"] + item["text"].count("\n") + 1]
    assert rows[0].startswith(lines[start["line"]][: start["character"]])
    return deletion, {"row": end["line"], "col": 0, "lines": rows}


def assert_drawn(session: NvimSession, text: str, item: dict[str, Any]) -> None:
    deletion, insertion = expected_marks(text, item)
    drawn = marks(session)
    assert any(all(m[k] == v for k, v in deletion.items()) for m in drawn), (deletion, drawn)
    assert any(all(m[k] == v for k, v in insertion.items()) for m in drawn), (insertion, drawn)
    row = cursor(session)[0] - 1
    if row != item["range"]["start"]["line"]:
        hint = [m for m in drawn if m["row"] == row and m["pos"] == "eol"]
        assert hint and "Tab to jump" in hint[0]["text"], drawn


def assert_tab_jumps_forward_in_the_jumplist(session: NvimSession) -> None:
    """Nothing shown: `<Tab>` does what it does without the plugin (<C-i>: newer jumplist position)."""
    session.nvim.command("call cursor(5, 1)")
    session.nvim.input("G")
    session.wait_for(lambda: cursor(session)[0] == len(session.lines()), 5, "G")
    session.nvim.input("<C-o>")
    session.wait_for(lambda: cursor(session)[0] == 5, 5, "<C-o> back to line 5")
    session.nvim.input("<Tab>")
    session.wait_for(lambda: cursor(session)[0] == len(session.lines()), 5, "<Tab> forward to the last line")


@pytest.mark.slow
def test_tab_jumps_to_the_next_edit_then_applies_it(session: NvimSession, tmp_path: Path) -> None:
    path = tmp_path / "views.py"
    path.write_text(VIEWS, encoding="utf-8")
    session.open(path)
    assert_tab_jumps_forward_in_the_jumplist(session)
    assert not session.lua("return require('dcomplete').next_edit_visible()")

    column = session.lines()[EDITED_LINE - 1].index(OLD)
    session.nvim.command(f"call cursor({EDITED_LINE}, {column + 1})")
    session.nvim.input(f"ciw{NEW}<Esc>")
    session.wait_for(lambda: session.mode() == "n" and NEW in session.lines()[EDITED_LINE - 1], 5, "the edit")
    text = session.text()
    assert text == VIEWS.replace(OLD, NEW, 2).replace(NEW, OLD, 1)  # the second occurrence (line 8) only

    item = wait_shown(session, 0, FIRST_ANSWER_S)
    request = answers(session)[-1]["params"]
    assert request["textDocument"]["version"] == lsp_version(session)
    assert request["position"] == {"line": EDITED_LINE - 1, "character": cursor(session)[1]}
    target = item["range"]["start"]["line"]
    assert target != EDITED_LINE - 1 and OLD in text.split("\n")[target], item
    assert_drawn(session, text, item)
    item_id = item["command"]["arguments"][0]
    assert any(n["params"]["item"]["command"]["arguments"] == [item_id] for n in session.tap()["notified"])

    # typing hides it at once; leaving insert mode asks again
    seen = len(answers(session))
    session.nvim.input("i")
    session.wait_for(lambda: session.mode() == "i", 5, "insert mode")
    assert marks(session) == [] and shown(session) is None
    session.nvim.input("<Esc>")
    item = wait_shown(session, seen, ANSWER_S)
    assert session.text() == text

    # <Esc> in normal mode dismisses it; then <Tab> is <Tab> again
    session.nvim.input("<Esc>")
    session.wait_for(lambda: marks(session) == [], 5, "the next edit dismissed")
    assert shown(session) is None and session.text() == text
    assert_tab_jumps_forward_in_the_jumplist(session)
    assert session.text() == text

    # asked for by command; <Tab> jumps (a jumplist entry), <Tab> applies
    session.nvim.command(f"call cursor({EDITED_LINE}, 1)")
    seen = len(answers(session))
    session.nvim.command("DcompleteNextEdit")
    item = wait_shown(session, seen, ANSWER_S)
    item_id = item["command"]["arguments"][0]
    target, start_col = item["range"]["start"]["line"], item["range"]["start"]["character"]
    assert_drawn(session, text, item)
    session.nvim.input("<Tab>")
    session.wait_for(lambda: cursor(session) == (target + 1, start_col), 5, "the cursor at the next edit")
    assert session.text() == text
    jumps, at = session.nvim.call("getjumplist")
    assert jumps[at - 1]["lnum"] == EDITED_LINE  # <C-o> returns to where the user was
    assert_drawn(session, text, item)  # still shown
    assert not any(m["pos"] == "eol" for m in marks(session))  # no hint on its own line

    seen = len(answers(session))
    session.nvim.input("<Tab>")
    followed = apply_text_edits(text, [{"range": item["range"], "newText": item["text"]}])
    session.wait_for(lambda: session.text() == followed, 5, "the next edit applied")
    ast.parse(followed)
    assert followed.split("\n")[target].count(NEW) == 1 and followed.count(OLD) == text.count(OLD) - 1
    assert not any(m["row"] == target for m in marks(session))  # its marks are gone
    assert (shown(session) or {}).get("command", {}).get("arguments") != [item_id]

    def accepted() -> bool:
        return any(c["params"]["command"] == "dcomplete.acceptedInlineEdit" and c["params"]["arguments"] == [item_id]
                   and not c.get("err") for c in session.tap()["commands"])

    session.wait_for(accepted, 10, "the server to answer the item's command")
    # Tab-Tab chains: after the accept the plugin asks again; another edit, if any, is elsewhere
    session.wait_for(lambda: len(answers(session)) > seen, ANSWER_S, "the request after the accept")
    chained = answers(session)[-1]
    assert chained["params"]["textDocument"]["version"] == lsp_version(session)
    for more in (chained.get("result") or {}).get("edits") or []:
        assert more["range"]["start"]["line"] not in (EDITED_LINE - 1, target), more
