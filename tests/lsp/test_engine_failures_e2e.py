"""The engine failing inside a request, and the model folder vanishing: the real server over stdio.

Failures are injected with the documented test hook DCOMPLETE_TEST_FAULT (lsp_server/faults.py), which
makes every model call raise on the server's worker thread, where the engine runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import RawConnection

URI = "file:///work/failing.py"
TEXT = "def total(items):\n    result = 0\n    for item in items:\n        result += item\n    return \n"
INLINE = {"textDocument": {"uri": URI}, "position": {"line": 4, "character": 11}, "context": {"triggerKind": 1}}


async def start(tmp_path: Path, model: str, fault: str | None = None) -> RawConnection:
    server = await RawConnection.start(tmp_path, {"DCOMPLETE_TEST_FAULT": fault} if fault else None)
    await server.request("initialize", {"capabilities": {}, "initializationOptions": {
        "dcomplete": {"model": model, "device": "cpu", "maxTokens": 8}}})
    server.notify("initialized", {})
    server.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": TEXT}})
    return server


def statuses(server: RawConnection) -> list[dict[str, Any]]:
    return [n["params"] for n in server.notifications if n["method"] == "dcomplete/status"]


@pytest.mark.parametrize(("fault", "said"), [("engine-error", "injected engine failure"), ("engine-oom", "ran out of memory")])
async def test_an_engine_failure_answers_with_an_error_and_is_reported_once(
    tiny_dream: Path, tmp_path: Path, fault: str, said: str
) -> None:
    server = await start(tmp_path, str(tiny_dream), fault)
    try:
        for _ in range(3):
            answer = await server.request("textDocument/inlineCompletion", INLINE)
            assert answer["error"]["code"] == -32603 and said in answer["error"]["message"], answer
            assert "traceback" not in str(answer["error"].get("data"))
        errors = [s["error"] for s in statuses(server) if "error" in s]
        assert len(errors) == 1 and said in errors[0], statuses(server)
        actions = await server.request("textDocument/codeAction", {
            "textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            "context": {"diagnostics": []}})
        assert actions["result"], actions  # the server keeps serving what needs no model
        assert server.process.returncode is None
    finally:
        await server.close()
    assert server.process.returncode == 0


async def test_the_model_folder_disappearing_leaves_the_loaded_model_serving(tiny_dream: Path, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(tiny_dream, folder)
    server = await start(tmp_path, str(folder))
    try:
        first = await server.request("textDocument/inlineCompletion", INLINE)
        assert "result" in first, first
        shutil.rmtree(folder)
        again = await server.request("textDocument/inlineCompletion", INLINE)
        assert "result" in again, again  # the weights are in memory; nothing reads the folder again
        server.notify("workspace/didChangeConfiguration", {"settings": {"dcomplete": {"model": str(folder) + "/"}}})
        for _ in range(2):
            reload = await server.request("textDocument/inlineCompletion", INLINE)
            assert reload["result"]["items"] == [], reload
        shown = [n["params"] for n in server.notifications if n["method"] == "window/showMessage" and n["params"]["type"] == 1]
        assert len(shown) == 1 and str(folder) in shown[0]["message"], shown
    finally:
        await server.close()
    assert server.process.returncode == 0
