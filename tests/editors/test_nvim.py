"""End-to-end: a real headless Neovim with editors/nvim loaded, talking to the real `dcomplete serve`.

Each test opens a Python file, lets the plugin ask the server, then checks the buffer against exactly
what the server sent (captured on the client side by a request tap, see nvim_session.TAP_LUA).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from editor_server import server_command, server_settings
from nvim_session import NvimSession

# Completion and infill happen inside the docstring: there a random tiny checkpoint's text still
# parses, so the server (which drops edits that add parse errors) reliably has something to offer.
SOURCE = '''import os


def list_python_files(folder):
    """Names of the Python files in folder.

    The names come back sorted, without the folder part.
    Hidden files are included.
    """
    result = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            result.append(name)
    return result
'''
COMPLETION_LINE, TYPED = 8, " and"
INFILL_FIRST, INFILL_LAST = 7, 8
GHOST_TIMEOUT_S = 40.0  # first answer includes the model load (~10 s alone, more on a busy machine)


def offset(text: str, line: int, character: int) -> int:
    """Offset of an LSP position in `text` (the fixture is ASCII, so every encoding agrees)."""
    lines = text.split("\n")
    return sum(len(item) + 1 for item in lines[:line]) + character


def apply_text_edits(text: str, edits: list[dict[str, Any]]) -> str:
    spans = [
        (
            offset(text, e["range"]["start"]["line"], e["range"]["start"]["character"]),
            offset(text, e["range"]["end"]["line"], e["range"]["end"]["character"]),
            e["newText"],
        )
        for e in edits
    ]
    for start, end, new_text in sorted(spans, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


def shown_item(tap: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The item on screen: the first non-empty one of the newest answer that had any."""
    for entry in reversed(tap["inline"]):
        result = entry.get("result") or {}
        items = result.get("items", result) if isinstance(result, dict) else result
        items = [
            item for item in items or [] if isinstance(item.get("insertText"), str) and item["insertText"]
        ]
        if items:
            return items[0], entry["params"]
    raise AssertionError(f"the server sent no non-empty inline completion item: {tap['inline']!r}")


def expected_after_accept(text: str, item: dict[str, Any], params: dict[str, Any]) -> str:
    if item.get("range"):
        return apply_text_edits(text, [{"range": item["range"], "newText": item["insertText"]}])
    position = params["position"]
    return apply_text_edits(
        text, [{"range": {"start": position, "end": position}, "newText": item["insertText"]}]
    )


@pytest.fixture
def source_file(tmp_path: Path) -> Path:
    path = tmp_path / "sample.py"
    path.write_text(SOURCE, encoding="utf-8")
    return path


@pytest.fixture
def make_session(tiny_dream: Path, tmp_path: Path):
    sessions: list[NvimSession] = []

    def start(renderer: str) -> NvimSession:
        log = tmp_path / "server.log"
        command = ["env", f"XDG_STATE_HOME={tmp_path / 'state'}", *server_command(log)]
        session = NvimSession.start(command, renderer, server_settings(str(tiny_dream)), log)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()


def wait_for_ghost(session: NvimSession) -> None:
    session.wait_for(session.visible, GHOST_TIMEOUT_S, "ghost text to appear")


def type_at_end_of_line(session: NvimSession, line: int, typed: str) -> None:
    """Appends `typed` to `line` (1-based) in insert mode, as a user writing on would."""
    session.nvim.command(f"call cursor({line}, 1)")
    session.nvim.input("A" + typed)
    session.wait_for(lambda: session.mode() == "i" and typed in session.lines()[line - 1], 5, "insert mode")


def show_ghost(session: NvimSession, line: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Types TYPED at the end of `line` and waits for the ghost text: (the text before any of it is
    accepted, the item shown, the request it answered)."""
    type_at_end_of_line(session, line, TYPED)
    before = session.text()
    wait_for_ghost(session)
    item, params = shown_item(session.tap())
    return before, item, params


def type_wait_and_accept(session: NvimSession, line: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Types TYPED at the end of `line`, waits for the ghost text, accepts it with Tab and checks that the
    buffer holds exactly what the server sent; returns the item and its request's params."""
    before, item, params = show_ghost(session, line)
    session.nvim.input("<Tab>")
    session.wait_for(lambda: session.text() != before, 5, "the accepted suggestion in the buffer")
    assert session.text() == expected_after_accept(before, item, params)
    return item, params


def ghost_after_typing(
    make_session: Any, source_file: Path, renderer: str
) -> tuple[NvimSession, str, dict[str, Any], dict[str, Any]]:
    """A session whose user typed `TYPED` on the completion line and sees ghost text: (session, the text
    before any of it is accepted, the item shown, the request it answered)."""
    session = make_session(renderer)
    session.open(source_file)
    return (session, *show_ghost(session, COMPLETION_LINE))


def still_ahead(session: NvimSession, item: dict[str, Any]) -> str:
    """The part of `item` after the cursor."""
    row, col = session.nvim.current.window.cursor
    line = session.lines()[row - 1]
    typed = line[item["range"]["start"]["character"] : col] if item.get("range") else ""  # an ASCII line
    assert item["insertText"].startswith(typed), (item, line, col)
    return item["insertText"][len(typed) :]


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
GHOST_LUA = """
for _, name in ipairs({ 'dcomplete.ghost', 'nvim.lsp.inline_completion' }) do
  local ns = vim.api.nvim_get_namespaces()[name]
  for _, mark in ipairs(ns and vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true }) or {}) do
    if mark[4].virt_text then
      return mark[4].virt_text[1][1]
    end
  end
end
return vim.NIL
"""
# Samples the ghost text at every cursor move in insert mode, right after the renderers' own handlers
# (defined earlier, so run earlier) and before any answer from the server can be handled.
SAMPLE_LUA = f"""
_G.dc_samples = {{}}
local function ghost() {GHOST_LUA} end
vim.api.nvim_create_autocmd('CursorMovedI', {{ callback = function()
  table.insert(_G.dc_samples, ghost())
end }})
"""


def item_id(item: dict[str, Any]) -> str:
    return item["command"]["arguments"][0]["itemId"]


def inferences(session: NvimSession) -> int:
    return session.lua("return (require('dcomplete.server').status or {}).inferences or 0")


def answer_at(session: NvimSession, character: int) -> dict[str, Any] | None:
    """The first item of the newest answer to a request made with the cursor at `character`."""
    for entry in reversed(session.tap()["inline"]):
        if entry["params"]["position"]["character"] == character and "result" in entry:
            items = (entry.get("result") or {}).get("items") or []
            return items[0] if items else {}
    return None


def typeable(chars: str) -> bool:
    return chars.isprintable() and "<" not in chars


@pytest.mark.slow
@pytest.mark.parametrize("renderer", ["builtin", "extmark"])
def test_typing_through_keeps_the_ghost_text_and_tab_accepts_the_item_once(
    make_session, source_file: Path, renderer: str, tmp_path: Path
) -> None:
    session, before, item, _params = ghost_after_typing(make_session, source_file, renderer)
    ahead = still_ahead(session, item)
    assert typeable(ahead[:2]) and ahead[2:].strip(), f"the random model's suggestion {ahead!r} cannot be typed"
    runs = inferences(session)
    character = session.nvim.current.window.cursor[1]
    session.lua(SAMPLE_LUA)
    for typed in (1, 2):
        session.nvim.input(ahead[typed - 1])
        character += 1
        session.wait_for(lambda n=typed: session.lua("return #_G.dc_samples") >= n, 5, "the keystroke")
        sample = session.lua("return _G.dc_samples[#_G.dc_samples]")
        shown = session.nvim.call("strtrans", ahead[typed:].split("\n")[0])  # control characters as ^X
        assert sample == shown  # shown at the keystroke, not when the server answers
        rest = session.wait_for(lambda at=character: answer_at(session, at), 10, "the answer for the keystroke")
        assert item_id(rest) == item_id(item) and rest["insertText"] == ahead[typed:]
        assert rest["range"]["start"] == {"line": COMPLETION_LINE - 1, "character": character}
        session.wait_for(lambda shown=shown: session.lua(GHOST_LUA) == shown, 5, "the rest shown")
    assert inferences(session) == runs  # typing through ran no model

    session.nvim.input("<Tab>")
    row = COMPLETION_LINE - 1
    at = offset(before, row, len(before.split("\n")[row]))
    expected = before[:at] + ahead + before[at:]
    session.wait_for(lambda: session.text() == expected, 5, "the accepted suggestion in the buffer")
    log = tmp_path / "state" / "dcomplete" / "feedback.jsonl"
    session.wait_for(lambda: log.exists() and "accepted" in log.read_text(), 5, "the acceptance in the log")
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events if e.get("itemId") == item_id(item)] == ["accepted"]


@pytest.mark.slow
def test_a_mismatching_keystroke_drops_the_ghost_text_and_backspace_brings_it_back_from_the_cache(
    make_session, source_file: Path
) -> None:
    session, _before, item, _params = ghost_after_typing(make_session, source_file, "extmark")
    ahead = still_ahead(session, item)
    character = session.nvim.current.window.cursor[1]
    wrong = "Q" if not ahead.startswith("Q") else "Z"

    session.lua(SAMPLE_LUA)
    session.nvim.input(wrong)
    session.wait_for(lambda: session.lua("return #_G.dc_samples") > 0, 5, "the keystroke")
    assert session.lua("return _G.dc_samples[1]") is None  # dropped at the keystroke
    other = session.wait_for(lambda: answer_at(session, character + 1), GHOST_TIMEOUT_S, "the answer after it")
    assert not other or item_id(other) != item_id(item)
    runs = inferences(session)

    session.nvim.input("<BS>")
    session.wait_for(session.visible, 10, "the ghost text back at the place seen before")
    assert session.lua("return require('dcomplete.render.extmark')._remaining(0)") == ahead
    again = answer_at(session, character)
    assert again and item_id(again) != item_id(item)  # a new offer of the same suggestion
    assert inferences(session) == runs  # from the cache
