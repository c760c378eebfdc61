"""A slow engine (every model call takes seconds, `DCOMPLETE_TEST_FAULT=slow-engine:MS`): what the real
server answers at once instead of after the call in flight."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsp_harness import RawConnection

URI = "file:///work/slow.py"
TEXT = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return \n"
CALL_MS = 4000


def inline(line: int, character: int) -> dict[str, object]:
    return {"textDocument": {"uri": URI}, "position": {"line": line, "character": character},
            "context": {"triggerKind": 2}}


async def started(tiny_anchored: Path, tmp_path: Path, call_ms: int) -> RawConnection:
    """A server whose every model call takes `call_ms`, initialized, with URI open, loaded and answered once
    (the open's prefill done)."""
    server = await RawConnection.start(tmp_path, {"DCOMPLETE_TEST_FAULT": f"slow-engine:{call_ms}"})
    try:
        await server.request("initialize", {"capabilities": {}, "initializationOptions": {
            "dcomplete": {"model": str(tiny_anchored), "device": "cpu", "maxTokens": 8}}})
        server.notify("initialized", {})
        server.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "python", "version": 1,
                                                                "text": TEXT}})
        await server.request("textDocument/inlineCompletion", inline(4, 11))
    except BaseException:
        await server.close()
        raise
    return server


async def test_a_place_with_nothing_to_complete_answers_while_a_model_call_runs(
    tiny_anchored: Path, tmp_path: Path
) -> None:
    """A request at the end of `return ` starts a model call; a request inside the word `result` that
    follows has nothing to complete. It is answered at once, and the first request, which it supersedes,
    too: neither waits for the call in flight."""
    server = await started(tiny_anchored, tmp_path, CALL_MS)
    try:
        server.send({"id": "running", "method": "textDocument/inlineCompletion", "params": inline(2, 22)})
        await asyncio.sleep(0.5)
        asked = time.perf_counter()
        server.send({"id": "inside-word", "method": "textDocument/inlineCompletion", "params": inline(1, 7)})
        answered: dict[str, tuple[float, dict[str, object]]] = {}
        while len(answered) < 2:
            message = await asyncio.wait_for(server._read(), CALL_MS / 1000)
            if message.get("id") in ("running", "inside-word") and "method" not in message:
                answered[message["id"]] = (time.perf_counter() - asked, message)
        for name, (seconds, message) in answered.items():
            assert message["result"]["items"] == [], message  # nothing here; superseded
            assert seconds < CALL_MS / 2000, (name, seconds)  # not after the call in flight
    finally:
        await server.close()


async def test_a_document_asked_for_at_once_is_not_warmed_first(tiny_anchored: Path, tmp_path: Path) -> None:
    """Opening a document queues a prefill for a completion at its end; when the editor asks at once (the
    first suggestion after a start), the request's own call runs instead of waiting behind that one."""
    server = await started(tiny_anchored, tmp_path, 1500)
    other = "file:///work/other.py"
    try:
        server.send({"id": "busy", "method": "textDocument/inlineCompletion", "params": inline(2, 22)})
        await asyncio.sleep(0.3)  # the worker is in that call: what follows queues behind it
        server.notify("textDocument/didOpen", {"textDocument": {"uri": other, "languageId": "python",
                                                                "version": 1, "text": "import os\n" + TEXT}})
        answer = await server.request("textDocument/inlineCompletion",
                                      {**inline(5, 11), "textDocument": {"uri": other}})
        assert "items" in answer["result"], answer
        state = (await server.request("dcomplete/documentState", {"uri": other}))["result"]
        assert state["warmed"] is None and state["version"] == 1, state
    finally:
        await server.close()
