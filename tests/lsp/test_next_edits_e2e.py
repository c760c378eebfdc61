"""Next edits over LSP: the real server over stdio with the bundled model, spoken to as a Copilot next-edit
client speaks (`textDocument/copilotInlineEdit`, `textDocument/didShowInlineEdit`, the item's command)."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import Session, start_server
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.support.next_edit_sample import NEW, OLD, VIEWS

URI = "file:///work/views.py"
TEXT = VIEWS


async def request(server: Session, line: int, character: int, version: int | None = None) -> dict[str, Any]:
    params = {"textDocument": {"uri": URI, "version": server.version if version is None else version},
              "position": {"line": line, "character": character}, "context": {"triggerKind": 2}}
    result = await server.client.protocol.send_request_async("textDocument/copilotInlineEdit", params)
    return result if isinstance(result, dict) else {k: getattr(result, k) for k in ("edits",)}


def field(obj: Any, *names: str) -> Any:
    for name in names:
        obj = obj[name] if isinstance(obj, dict) else getattr(obj, name)
    return obj


def apply(text: str, edit: Any) -> str:
    lines = text.split("\n")
    start, end = field(edit, "range", "start"), field(edit, "range", "end")
    offsets = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines))]
    a = offsets[field(start, "line")] + field(start, "character")
    b = offsets[field(end, "line")] + field(end, "character")
    return text[:a] + field(edit, "text") + text[b:]


@pytest.mark.slow
async def test_an_edit_is_followed_where_its_old_text_still_stands(tmp_path: Path) -> None:
    async with start_server(tmp_path, {"model": "default", "nextEdit": {"aggressiveness": "high"}}) as server:
        assert server.init.capabilities.experimental["nextEdits"]["copilotInlineEdit"] is True
        await server.open(URI, TEXT)
        line = 7
        column = TEXT.split("\n")[line].index(OLD)
        await server.edit(URI, (line, column), (line, column + len(OLD)), NEW)
        text = TEXT.replace(OLD + '({"error"', NEW + '({"error"', 1)

        result = await asyncio.wait_for(request(server, line, column + len(NEW)), 180)
        (edit,) = result["edits"]
        assert field(edit, "textDocument", "uri") == URI and field(edit, "textDocument", "version") == server.version
        target = field(edit, "range", "start", "line")
        assert target != line and OLD in text.split("\n")[target]  # a place that still held the old name
        followed = apply(text, edit)
        assert followed.split("\n")[target].count(NEW) == 1 and followed.count(OLD) == text.count(OLD) - 1
        ast.parse(followed)

        command = field(edit, "command")
        item_id = field(command, "arguments")[0]
        server.client.protocol.notify("textDocument/didShowInlineEdit", {"item": {"command": {"arguments": [item_id]}}})
        start, end = field(edit, "range", "start"), field(edit, "range", "end")
        await server.edit(URI, (field(start, "line"), field(start, "character")),
                          (field(end, "line"), field(end, "character")), field(edit, "text"))
        await server.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=field(command, "command"), arguments=[item_id]))

        # the accepted edit is history too: the next request follows on to the last place left
        again = await asyncio.wait_for(request(server, target, 0), 180)
        for more in again["edits"]:
            assert field(more, "range", "start", "line") not in (line, target)

        stale = await request(server, line, 0, version=server.version - 1)
        assert stale["edits"] == []  # a client's copy behind the server's gets nothing to misplace
        with pytest.raises(JsonRpcException, match="position"):
            await server.client.protocol.send_request_async(
                "textDocument/copilotInlineEdit", {"textDocument": {"uri": URI}, "position": {"line": -1}})
