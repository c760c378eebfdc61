"""Bad input over the wire: a malformed request, invalid settings, a model that cannot load.

Driven by a bare JSON-RPC client, because a typed client refuses to send malformed params.
"""

from __future__ import annotations

from pathlib import Path

from lsp_harness import RawConnection

URI = "file:///work/broken.py"


async def test_bad_input_gets_one_clear_answer_and_the_server_keeps_serving(tmp_path: Path) -> None:
    server = await RawConnection.start(tmp_path)
    try:
        init = await server.request(
            "initialize",
            {
                "capabilities": {"general": {"positionEncodings": ["utf-16", "utf-8"]}},
                "initializationOptions": {
                    "dcomplete": {"model": str(tmp_path / "no-such-model"), "steps": "many", "debounceMs": 0}
                },
            },
        )
        assert init["result"]["capabilities"]["positionEncoding"] == "utf-8"
        server.notify("initialized", {})
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": "x = '😀'  # é: \n"}},
        )

        malformed = await server.request(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": URI},
                "position": {"line": "first", "character": 3},
                "context": {"triggerKind": 1},
            },
        )
        assert malformed["error"]["code"] == -32602
        assert "position.line" in malformed["error"]["message"]

        unknown_document = await server.request(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": "file:///never-opened.py"},
                "position": {"line": 0, "character": 0},
                "context": {"triggerKind": 1},
            },
        )
        assert "never-opened.py is not open" in unknown_document["error"]["message"]

        for _ in range(2):  # the model is missing: empty answers, and one message about it
            answer = await server.request(
                "textDocument/inlineCompletion",
                {
                    "textDocument": {"uri": URI},
                    "position": {"line": 1, "character": 0},
                    "context": {"triggerKind": 1},
                },
            )
            assert answer["result"]["items"] == []

        bad_command = await server.request(
            "workspace/executeCommand", {"command": "dcomplete.fillHoles", "arguments": [{"url": URI}]}
        )
        assert bad_command["error"]["code"] == -32602 and "`uri`" in bad_command["error"]["message"]

        shown = [n["params"] for n in server.notifications if n["method"] == "window/showMessage"]
        assert any("`steps`" in m["message"] and m["type"] == 2 for m in shown)
        failures = [m for m in shown if m["type"] == 1]
        assert len(failures) == 1 and "no-such-model" in failures[0]["message"]

        server.notify("workspace/didChangeConfiguration", {"settings": {"dcomplete": {"maxTokens": -3}}})
        actions = await server.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": URI},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
                "context": {"diagnostics": []},
            },
        )
        assert [a["command"]["command"] for a in actions["result"]] == [
            "dcomplete.regenerateSelection",
            "dcomplete.refactorSelection",
        ]
        shown = [n["params"]["message"] for n in server.notifications if n["method"] == "window/showMessage"]
        assert any("`maxTokens`" in message for message in shown)
    finally:
        await server.close()
    assert server.process.returncode == 0


async def test_garbage_on_the_wire_does_not_stop_the_server(tmp_path: Path) -> None:
    server = await RawConnection.start(tmp_path)
    try:
        assert server.process.stdin is not None
        for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 99, "method": 3}'):
            server.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        init = await server.request("initialize", {"capabilities": {}})
        assert "inlineCompletionProvider" in init["result"]["capabilities"]
    finally:
        await server.close()
