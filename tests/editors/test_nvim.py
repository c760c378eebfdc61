"""End-to-end: a real headless Neovim with editors/nvim loaded, talking to the real `dcomplete serve`.

Each test opens a Python file, lets the plugin ask the server, then checks the buffer against exactly
what the server sent (captured on the client side by a request tap, see nvim_session.TAP_LUA).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from nvim_ghost import (
    COMPLETION_LINE,
    GHOST_TIMEOUT_S,
    INFILL_FIRST,
    INFILL_LAST,
    TYPED,
    apply_text_edits,
    ghost_after_typing,
    offset,
    still_ahead,
    type_at_end_of_line,
    type_wait_and_accept,
    wait_for_ghost,
)
from nvim_session import NvimSession


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["builtin", "extmark"])
def test_accept_inserts_exactly_what_the_server_sent(make_session, source_file: Path, renderer: str) -> None:
    session = make_session(renderer)
    session.open(source_file)
    assert session.lua("return require('dcomplete').renderer_name()") == renderer
    item, params = type_wait_and_accept(session, COMPLETION_LINE)
    assert params["context"]["triggerKind"] == 2
    ast.parse(session.text())

    command = item.get("command")
    if command:

        def acceptance_answered() -> bool:
            return any(
                entry["params"]["command"] == command["command"] and not entry.get("err")
                for entry in session.tap()["commands"]
            )

        session.wait_for(acceptance_answered, 5, f"the server to answer {command['command']}")


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["builtin", "extmark"])
def test_dismiss_leaves_the_buffer_untouched(make_session, source_file: Path, renderer: str) -> None:
    session, before, _item, _params = ghost_after_typing(make_session, source_file, renderer)

    session.nvim.input("<C-]>")
    session.wait_for(lambda: not session.visible(), 5, "the ghost text to go away")
    assert session.text() == before
    session.nvim.input("<Esc>")
    session.wait_for(lambda: session.mode() == "n", 5, "normal mode")
    assert session.text() == before
    assert not session.visible()


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["builtin", "extmark"])
def test_accept_word_takes_one_word(make_session, source_file: Path, renderer: str) -> None:
    session, before, item, _params = ghost_after_typing(make_session, source_file, renderer)
    row, col = session.nvim.current.window.cursor
    remaining = still_ahead(session, item)
    word = session.lua("return require('dcomplete.text').next_word(...)", remaining)
    assert word and remaining.startswith(word)

    session.nvim.input("<M-w>")
    session.wait_for(lambda: session.text() != before, 5, "the accepted word in the buffer")
    at = offset(before, row - 1, col)
    assert session.text() == before[:at] + word + before[at:]
    if renderer == "extmark" and len(word) < len(remaining):
        assert (
            session.lua("return require('dcomplete.render.extmark')._remaining(0)") == remaining[len(word) :]
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ex_command", "server_command_name"),
    [
        ("DcompleteInfill", "dcomplete.regenerateSelection"),
        ("DcompleteRefactor say it in fewer words", "dcomplete.refactorSelection"),
    ],
)
def test_range_command_replaces_exactly_the_selected_lines(
    make_session, source_file: Path, ex_command: str, server_command_name: str
) -> None:
    session = make_session("extmark")
    session.open(source_file)
    before = session.text()

    session.nvim.command(f"{INFILL_FIRST},{INFILL_LAST}{ex_command}")
    session.wait_for(
        lambda: session.tap()["commands"], GHOST_TIMEOUT_S, f"the answer to {server_command_name}"
    )
    answer = session.tap()["commands"][0]
    assert answer["params"]["command"] == server_command_name
    assert not answer.get("err"), answer
    edits = session.tap()["edits"]
    assert len(edits) == 1, f"expected one workspace/applyEdit, got {edits!r}"
    edit = edits[0]["edit"]
    uri = session.lua("return vim.uri_from_bufnr(0)")
    changes = edit.get("changes", {}).get(uri) or [
        text_edit for change in edit.get("documentChanges", []) for text_edit in change["edits"]
    ]
    assert changes, edit
    expected = apply_text_edits(before, changes)
    session.wait_for(lambda: session.text() == expected, 5, "the applied edit in the buffer")

    old, new = before.split("\n"), session.text().split("\n")
    kept_below = len(old) - INFILL_LAST
    assert new[: INFILL_FIRST - 1] == old[: INFILL_FIRST - 1], "lines above the range changed"
    assert new[len(new) - kept_below :] == old[INFILL_LAST:], "lines below the range changed"
    assert new != old, "the edit changed nothing"
    for change in changes:
        assert change["range"]["start"]["line"] >= INFILL_FIRST - 1, change
        assert change["range"]["end"]["line"] <= INFILL_LAST, change
    ast.parse(session.text())


@pytest.mark.slow
def test_next_asks_the_server_for_alternatives(make_session, source_file: Path) -> None:
    session = make_session("extmark")
    session.open(source_file)
    type_at_end_of_line(session, COMPLETION_LINE, TYPED)
    before = session.text()
    wait_for_ghost(session)

    session.nvim.input("<M-]>")

    def invoked_answer() -> dict[str, Any] | None:
        for entry in session.tap()["inline"]:
            if entry["params"]["context"]["triggerKind"] == 1 and (entry.get("result") or entry.get("err")):
                return entry
        return None

    entry = session.wait_for(invoked_answer, GHOST_TIMEOUT_S, "the answer to the invoked request")
    assert not entry.get("err"), entry
    items = [item["insertText"] for item in entry["result"]["items"]]
    assert items, entry
    assert len(set(items)) == len(items), "alternatives repeat"
    session.wait_for(session.visible, 5, "ghost text after cycling")
    shown = session.lua("return require('dcomplete.render.extmark')._remaining(0)")
    assert any(text.endswith(shown) for text in items), (shown, items)
    assert session.text() == before


@pytest.mark.slow
def test_checkhealth_and_statusline(make_session, source_file: Path) -> None:
    session = make_session("builtin")
    session.open(source_file)
    session.nvim.command("checkhealth dcomplete")
    report = "\n".join(session.nvim.current.buffer[:])
    assert "ERROR" not in report, report
    assert "the server command runs" in report, report
    assert "inline completion advertised" in report, report
    assert "next edits on (textDocument/copilotInlineEdit)" in report, report
    session.nvim.command("bwipeout")
    session.nvim.command(f"buffer {source_file}")

    type_at_end_of_line(session, COMPLETION_LINE, TYPED)
    wait_for_ghost(session)
    status = session.wait_for(
        lambda: session.lua("return require('dcomplete').statusline()"), 5, "a dcomplete/status notification"
    )
    assert "cpu" in status and "ms" in status, status


def server_pids(session: NvimSession) -> list[int]:
    """Processes running the language server under this Neovim (found through /proc)."""
    nvim_pid = session.lua("return vim.fn.getpid()")
    found = []
    for children in Path(f"/proc/{nvim_pid}/task").glob("*/children"):
        for pid in children.read_text().split():
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes() if Path(f"/proc/{pid}/cmdline").exists() else b""
            if b"lsp_server" in cmdline:
                found.append(int(pid))
    return found


@pytest.mark.slow
def test_a_killed_server_is_restarted_and_completion_works_again(make_session, source_file: Path) -> None:
    import os
    import signal

    session = make_session("extmark")
    session.open(source_file)
    first_client = session.lua("return vim.lsp.get_clients({ bufnr = 0, name = 'dcomplete' })[1].id")
    [pid] = server_pids(session)
    os.kill(pid, signal.SIGKILL)

    def reattached() -> bool:
        return session.lua(
            "local c = vim.lsp.get_clients({ bufnr = 0, name = 'dcomplete' })[1]"
            " return c ~= nil and c.id ~= ... and c.initialized == true"
            " and require('dcomplete').renderer_name() ~= nil",
            first_client,
        )

    session.wait_for(reattached, 60, "a new dcomplete client attached to the buffer")
    new_pids = server_pids(session)
    assert new_pids and pid not in new_pids
    assert "restarting it" in session.nvim.command_output("messages")
    type_at_end_of_line(session, COMPLETION_LINE, TYPED)
    wait_for_ghost(session)


TS_SOURCE = """// Names of the TypeScript files in a folder.
import { readdirSync } from "fs";

export function listFiles(folder: string): string[] {
  // The names come back sorted, without the folder part.
  return readdirSync(folder).filter((name) => name.endsWith(".ts")).sort();
}
"""
GO_SOURCE = """// Package files lists source files.
package files

import "os"

// ListFiles returns the names in folder.
func ListFiles(folder string) []string {
\t// The names come back sorted, without the folder part.
\tentries, _ := os.ReadDir(folder)
\tnames := []string{}
\tfor _, entry := range entries {
\t\tnames = append(names, entry.Name())
\t}
\treturn names
}
"""


@pytest.mark.slow
def test_ghost_text_in_typescript_and_go_files(make_session, tmp_path: Path) -> None:
    """The plugin attaches to other filetypes by default and the server completes them (the comment line
    keeps a random checkpoint's text parseable); what Tab inserts is exactly the server's item."""
    from infill.languages import get_language

    session = make_session("extmark")
    for name, source, line, filetype in (("list.ts", TS_SOURCE, 5, "typescript"), ("list.go", GO_SOURCE, 8, "go")):
        path = tmp_path / name
        path.write_text(source, encoding="utf-8")
        session.open(path)
        assert session.lua("return vim.bo.filetype") == filetype
        _, params = type_wait_and_accept(session, line)
        assert params["textDocument"]["uri"].endswith(name)
        assert not get_language(filetype).parse(session.text()).root_node.has_error
        session.nvim.input("<Esc>")


# What is drawn as ghost text on the cursor's line, by either renderer.
