"""Tabby's own agent against `dcomplete engine`: `tabby-agent` 1.5.0 from npm (`tests/support/tabby_agent.py`)
runs as a language server over stdio with its config file in a temporary home, pointed at the engine on
loopback with a key; a real LSP client asks it for a completion and gets the engine's text back. The
engine's answers are validated against Tabby's OpenAPI schema (tests/fixtures/tabby/openapi.json), and
Tabby's events reach the local feedback log."""

from __future__ import annotations

import asyncio
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from tests.engine_server import doc_configs
from tests.support import tabby_agent
from tests.support.engine_process import EngineProcess

SCHEMA = Path(__file__).parents[1] / "fixtures" / "tabby" / "openapi.json"
TOKEN = "tabby-test-key"
TEXT = "import os\n\n\ndef load(path):\n    return open(path).read()\n\n\nx = 1  # the value is\n\n\nprint(x)\n"
LINE = 7  # `x = 1  # the value is`: the cursor at its end


def tabby_schema(name: str) -> dict[str, Any]:
    """Component `name` of Tabby's OpenAPI 3.0 schema as JSON Schema: refs into `$defs`, `nullable` as a
    null alternative."""
    components = json.loads(SCHEMA.read_text())["components"]["schemas"]

    def convert(node: Any) -> Any:
        if isinstance(node, list):
            return [convert(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: convert(value) for key, value in node.items() if key not in ("nullable", "example")}
        if "$ref" in out:
            out["$ref"] = out["$ref"].replace("#/components/schemas/", "#/$defs/")
        return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out

    return {"$defs": convert(components), "$ref": f"#/$defs/{name}"}


def validate(value: Any, name: str) -> None:
    jsonschema.Draft202012Validator(tabby_schema(name)).validate(value)


@pytest.fixture(scope="module")
def engine(tiny_anchored, tmp_path_factory):
    state = tmp_path_factory.mktemp("state")
    process = EngineProcess(["--model", str(tiny_anchored), "--api-key", TOKEN])
    process.env["XDG_STATE_HOME"] = str(state)
    with process:
        yield process, state


def test_the_engine_answers_as_tabby_s_schema_says(engine):
    process, state = engine
    key = {"Authorization": f"Bearer {TOKEN}"}
    for method in ("GET", "POST"):  # the agent retries with POST when GET answers 405
        health = httpx.request(method, process.url + "/v1/health", headers=key)
        assert health.status_code == 200
        validate(health.json(), "HealthState")
    request = {"language": "python", "segments": {
        "prefix": TEXT[: TEXT.index("is\n") + 2], "suffix": TEXT[TEXT.index("is\n") + 2:], "filepath": "main.py",
        "declarations": [{"filepath": "util.py", "body": "def helper(a, b):\n    return a + b\n"}],
        "relevant_snippets_from_changed_files": [{"filepath": "b.py", "body": "y = helper(1, 2)\n", "score": 0.9}]},
        "temperature": 0.5, "seed": 7}
    validate(request, "CompletionRequest")
    answers = [httpx.post(process.url + "/v1/completions", json=request, headers=key, timeout=120) for _ in range(2)]
    for answer in answers:
        assert answer.status_code == 200
        validate(answer.json(), "CompletionResponse")
    assert answers[0].json()["choices"] == answers[1].json()["choices"]  # the same seed samples the same
    assert answers[0].json()["id"] != answers[1].json()["id"]
    nes = httpx.post(process.url + "/v1/completions", json={**request, "mode": "next_edit_suggestion"}, headers=key)
    assert nes.status_code == 400 and "next_edit_suggestion" in nes.json()["error"]["message"]

    completion_id = answers[0].json()["id"]
    for kind in ("view", "select"):
        event = {"type": kind, "completion_id": completion_id, "choice_index": 0, "elapsed": 120}
        validate(event, "LogEventRequest")
        assert httpx.post(process.url + "/v1/events", json=event, headers=key).status_code == 200
    logged = [json.loads(line) for line in (state / "dcomplete" / "feedback.jsonl").read_text().splitlines()]
    assert logged[-1]["event"] == "accepted" and logged[-1]["uri"] == f"tabby:{completion_id}"


async def test_tabby_agent_over_stdio_returns_the_engine_s_completion(engine, tabby_agent_script, tmp_path):
    process, _ = engine
    home = tmp_path / "home"
    config = doc_configs.block("Tabby's plugins (tabby-agent)")
    parsed = tomllib.loads(config)
    assert parsed["anonymousUsageTracking"] == {"disable": True}  # nothing but the engine is contacted
    config = config.replace(parsed["server"]["endpoint"], doc_configs.at(parsed["server"]["endpoint"], process.url))
    tabby_agent.write_config(home, config.replace(parsed["server"]["token"], TOKEN))
    async with httpx.AsyncClient(timeout=120) as http:  # the segments the agent sends for a new document
        expected = (await http.post(process.url + "/v1/completions", headers={"Authorization": f"Bearer {TOKEN}"},
                                    json={"language": "python", "segments": {
                                        "prefix": TEXT[: TEXT.index("is\n") + 2],
                                        "suffix": TEXT[TEXT.index("is\n") + 2:]}})).json()
    written = expected["choices"][0]["text"]
    assert written

    client = LanguageClient("dcomplete-tests", "1")
    env = {**os.environ, "HOME": str(home), "USERPROFILE": str(home)}
    await client.start_io("node", str(tabby_agent_script), "--lsp", "--stdio", env=env, cwd=str(tmp_path))
    try:
        init = await asyncio.wait_for(client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), client_info=types.ClientInfo("dcomplete-tests", "1"),
            root_uri=tmp_path.as_uri())), 60)
        assert init.capabilities.completion_provider is not None
        client.initialized(types.InitializedParams())
        uri = (tmp_path / "main.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "python", 1, TEXT)))
        position = types.Position(LINE, len(TEXT.splitlines()[LINE]))
        items: list[types.CompletionItem] = []
        for _ in range(20):  # the agent answers nothing until its health check has found the engine
            result = await asyncio.wait_for(client.text_document_completion_async(types.CompletionParams(
                types.TextDocumentIdentifier(uri), position)), 120)
            items = result.items if isinstance(result, types.CompletionList) else list(result or [])
            if items:
                break
            await asyncio.sleep(0.5)
        assert items, "tabby-agent returned no completion"
        edit = items[0].text_edit
        word = "is"  # the agent's item replaces the word before the cursor with itself plus the completion
        assert isinstance(edit, types.TextEdit) and edit.range.start == types.Position(LINE, position.character - 2)
        assert edit.new_text == word + written.rstrip()  # its post-processing trims trailing spaces
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
    finally:
        agent = client._server  # stop() waits for the agent to exit, which a failed test never told it to
        if agent is not None and agent.returncode is None:
            agent.kill()
        await client.stop()
