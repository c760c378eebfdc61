"""End-to-end: the packaged extension in a real VS Code (code-server 4.100.3) driven through headless
Chromium by playwright-core, talking to the real `dcomplete serve` of this checkout.

The driver (editors/vscode/test/e2e/codeServer.e2e.ts) types in a TypeScript file, waits for the ghost
text, types its first characters (the ghost text must stay, showing the rest), accepts it with Tab and
saves; then runs "dcomplete: Fill holes in file" from the command palette and saves. This test
then compares the files on disk with exactly what the server sent, read from the server's own log
(`--verbose` logs every message it sends), and which suggestion was accepted from the server's
feedback log (the accept command VS Code runs carries the item's id).

Installs on first use, cached for later runs: code-server into ~/.cache/dcomplete/ (see code_server.py)
and, when missing, Chromium, ripgrep and libkrb5-dev with apt-get (as root; CI runs as root).
The default model is a checkpoint that writes one identifier token everywhere, so every suggestion
parses and the test is deterministic. `DCOMPLETE_VSCODE_MODEL=default` runs it with the bundled model
and `DCOMPLETE_VSCODE_SCREENSHOTS=<folder>` copies the screenshots there (docs/editors.md, README).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from code_server import CHROMIUM, CodeServer
from vscode_build import package_vsix

from infill.languages import get_language
from tests.support.checkpoints import make_one_token_checkpoint

# Ghost text in a TypeScript file (the holes stay Python: both kinds of language in one run). The
# one-token model's `xxxx` after `text.` is a property, so the edit parses and the server (which drops
# edits that add parse errors) always has a suggestion.
COMPLETION_SOURCE = """import { readFileSync } from "fs";

// Number of lines in the text file at path.
export function countLines(path: string): number {
  const text = readFileSync(path, "utf8");
  const lines =
  return lines.length;
}
"""
COMPLETION_LINE, TYPED = 6, " text."
TYPE_THROUGH = 2  # characters of the ghost text typed before Tab
HOLES_SOURCE = '''def area(width, height):
    """Area of a width x height rectangle."""
    # <|hole|>


def perimeter(width, height):
    """Perimeter of a width x height rectangle."""
    # <|hole|>
'''
HOLE_MARKER = "# <|hole|>"
WAIT_MS = 90_000  # the first answer includes loading the model, on a machine shared with other tests
SENT = re.compile(r" Sending data: (\{.*\})$")


def sent_messages(log: Path) -> list[dict[str, Any]]:
    """Every JSON-RPC message the server wrote, from its --verbose log."""
    messages = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = SENT.search(line)
        if match:
            messages.append(json.loads(match.group(1)))
    return messages


def offers(messages: list[dict[str, Any]], item_id: str) -> list[dict[str, Any]]:
    """Every inline item the server sent with `item_id`, in order: the first offer, then the rest of it
    each time the user typed through it."""
    found = []
    for message in messages:
        result = message.get("result")
        items = result.get("items") if isinstance(result, dict) else result
        for item in items if isinstance(items, list) else []:
            arguments = (item.get("command") or {}).get("arguments") or [{}]
            if isinstance(arguments[0], dict) and arguments[0].get("itemId") == item_id:
                found.append(item)
    assert found, f"the server never offered item {item_id}"
    return found


def offset(text: str, position: dict[str, int]) -> int:
    """Offset of an LSP position in ASCII `text` (every position encoding agrees there)."""
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: position["line"]]) + position["character"]


def apply_edits(text: str, edits: list[dict[str, Any]]) -> str:
    spans = sorted(
        ((offset(text, e["range"]["start"]), offset(text, e["range"]["end"]), e["newText"]) for e in edits),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def typed_so_far(item: dict[str, Any]) -> str:
    """The document the accepted item was computed for: the typed text up to the request's cursor,
    which is where the item's range ends."""
    end = item["range"]["end"]
    assert end["line"] == COMPLETION_LINE - 1, item
    lines = COMPLETION_SOURCE.split("\n")
    typed = TYPED[: end["character"] - len(lines[COMPLETION_LINE - 1])]
    lines[COMPLETION_LINE - 1] += typed
    return "\n".join(lines)


def edit_requests(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"]["edit"] for m in messages if m.get("method") == "workspace/applyEdit"]


def text_edits(edit: dict[str, Any]) -> list[dict[str, Any]]:
    changes = [e for change in edit.get("documentChanges", []) for e in change["edits"]]
    return changes + [e for per_file in edit.get("changes", {}).values() for e in per_file]


def user_settings(model: str, server_log: Path) -> dict[str, Any]:
    """The extension's settings, and an editor that inserts only what is typed (no auto-closed brackets,
    no suggest widget over the ghost text) and shows no welcome page."""
    return {
        "dcomplete.pythonPath": sys.executable,
        "dcomplete.serverArgs": ["--log-file", str(server_log), "--verbose"],
        "dcomplete.model": model,
        "dcomplete.device": "cpu",
        "dcomplete.maxTokens": 16,
        "dcomplete.debounceMs": 0,
        "editor.autoClosingBrackets": "never",
        "editor.autoClosingQuotes": "never",
        "editor.quickSuggestions": {"other": "off", "comments": "off", "strings": "off"},
        "editor.suggestOnTriggerCharacters": False,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "files.autoSave": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
    }


@pytest.fixture
def model(tmp_path: Path) -> str:
    chosen = os.environ.get("DCOMPLETE_VSCODE_MODEL")
    return chosen or str(make_one_token_checkpoint(tmp_path / "one_token_model"))


@pytest.mark.slow
def test_ghost_text_tab_and_fill_holes_in_code_server(
    built_extension: Path, code_server_binary: Path, tmp_path: Path, model: str
) -> None:
    binary = code_server_binary
    vsix = package_vsix(built_extension)

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    completion_file, holes_file = workspace / "count_lines.ts", workspace / "shapes.py"
    completion_file.write_text(COMPLETION_SOURCE)
    holes_file.write_text(HOLES_SOURCE)
    server_log, feedback = tmp_path / "server.log", tmp_path / "state" / "dcomplete" / "feedback.jsonl"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "OMP_NUM_THREADS": "1"}
    shots = tmp_path / "screenshots"
    shots.mkdir()
    code_server = CodeServer.start(binary, tmp_path, workspace, vsix, user_settings(model, server_log), env)
    try:
        plan = {
            "url": f"{code_server.url}?folder={workspace}",
            "chromium": CHROMIUM,
            "completionFile": str(completion_file),
            "completionLine": COMPLETION_LINE,
            "typed": TYPED,
            "typeThrough": TYPE_THROUGH,
            "holesFile": str(holes_file),
            "readyPattern": rf"{re.escape(Path(model).name)} · cpu",
            "statusPattern": rf"{re.escape(Path(model).name)} · cpu · \d+(\.\d)? m?s",
            "screenshots": str(shots),
            "report": str(tmp_path / "report.json"),
            "timeoutMs": WAIT_MS,
        }
        (tmp_path / "plan.json").write_text(json.dumps(plan))
        driver = built_extension / "out" / "test" / "e2e" / "codeServer.e2e.js"
        drive = subprocess.run(
            ["node", str(driver), str(tmp_path / "plan.json")],
            check=False, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        code_server.close()
    client_logs = [str(p) for p in tmp_path.glob("user-data/logs/*/exthost*/dcomplete.dcomplete/*.log")]
    logs = f"server log: {server_log}; extension log: {client_logs}; code-server log: {code_server.log}"
    assert drive.returncode == 0, f"{drive.stderr.strip()[-3000:]}\n{logs}"
    report = json.loads(Path(plan["report"]).read_text())
    messages = sent_messages(server_log)
    assert re.fullmatch(plan["statusPattern"], report["status"]), report["status"]

    events = [json.loads(line) for line in feedback.read_text().splitlines()]
    accepted = [event for event in events if event["event"] == "accepted"]
    assert len(accepted) == 1, f"VS Code ran the accept command {len(accepted)} times; {logs}"
    item_id = accepted[0]["itemId"]
    assert not [event for event in events if event.get("itemId") == item_id and event["event"] != "accepted"]
    item, *typed_through = offers(messages, item_id)
    expected = apply_edits(typed_so_far(item), [{"range": item["range"], "newText": item["insertText"]}])
    assert report["afterAccept"] == expected, logs

    # Typing the ghost text's first characters kept it on screen, and the server answered the requests
    # made meanwhile with the rest of the same item, its range starting at the new cursor.
    typed = report["typedThrough"]
    assert len(typed) == TYPE_THROUGH and item["insertText"].startswith(typed), report
    assert report["ghostAfterTyping"] == report["ghostShown"][len(typed) :], report
    # VS Code may narrow the suggestion it shows without asking again (it did in a TypeScript file, not in
    # a Python one); whatever it asked meanwhile must have been answered with the rest of the same item.
    cursor = item["range"]["start"]["character"]
    for rest in typed_through:
        count = rest["range"]["start"]["character"] - cursor
        assert 1 <= count <= len(typed) and rest["insertText"] == item["insertText"][count:], rest
        assert rest["range"]["start"]["line"] == item["range"]["start"]["line"], rest
        assert rest["range"]["end"]["character"] - item["range"]["end"]["character"] == count, rest
    assert report["afterAccept"] != COMPLETION_SOURCE.replace(" =\n", " =" + TYPED + "\n")
    assert not get_language("typescript").parse(report["afterAccept"]).root_node.has_error

    [edit] = edit_requests(messages)
    edits = text_edits(edit)
    hole_lines = [n for n, line in enumerate(HOLES_SOURCE.split("\n")) if line.strip() == HOLE_MARKER]
    assert sorted(e["range"]["start"]["line"] for e in edits) == hole_lines, edit
    assert report["afterHoles"] == apply_edits(HOLES_SOURCE, edits), logs
    assert HOLE_MARKER not in report["afterHoles"]

    keep = os.environ.get("DCOMPLETE_VSCODE_SCREENSHOTS")
    for shot in map(Path, report["screenshots"]):
        assert shot.stat().st_size > 10_000, shot
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(keep) / shot.name)
