"""End-to-end in a real headless Neovim: typing through a suggestion keeps the ghost text (the rest drawn
at the keystroke, the server answering with the same item and no model run), Tab accepts the item once,
a mismatching keystroke drops it and Backspace brings it back from the server's suggestion cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from nvim_ghost import COMPLETION_LINE, GHOST_TIMEOUT_S, ghost_after_typing, offset, still_ahead
from nvim_session import NvimSession

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
