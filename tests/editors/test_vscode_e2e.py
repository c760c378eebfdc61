"""End-to-end: the packaged extension in a real VS Code (code-server 4.100.3) driven through headless
Chromium by playwright-core, talking to the real `dcomplete serve` of this checkout.

The driver (editors/vscode/test/e2e/codeServer.e2e.ts) types in a TypeScript file, waits for the ghost
text, types its first characters (the ghost text must stay, showing the rest), accepts it with Tab and
saves; then runs "dcomplete: Fill holes in file" from the command palette and saves. This test
then compares the files on disk with exactly what the server sent, read from the server's own log
(`--verbose` logs every message it sends), and which suggestion was accepted from the server's
feedback log (the accept command VS Code runs carries the item's id).

The next-edit driver (test/e2e/nextEdit.e2e.ts) replaces a name by typing, with the bundled model (the
one-token checkpoint proposes no such edit), and follows the next edit the server draws on another line:
Escape, "dcomplete: Show the next edit", Tab to jump, Tab to apply; then Tab indents in another file.

Installs on first use, cached for later runs: code-server into ~/.cache/dcomplete/ (see code_server.py)
and, when missing, Chromium, ripgrep and libkrb5-dev with apt-get (as root; CI runs as root).
The ghost-text test's default model is a checkpoint that writes one identifier token everywhere, so every
suggestion parses and the test is deterministic. `DCOMPLETE_VSCODE_MODEL=default` runs it with the bundled model
and `DCOMPLETE_VSCODE_SCREENSHOTS=<folder>` copies the screenshots there (docs/editors.md, README).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from code_server import drive
from vscode_build import package_vsix

from infill.languages import get_language
from tests.support.checkpoints import make_one_token_checkpoint
from tests.support.next_edit_sample import NEW, OLD, VIEWS

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


def keep_screenshots(report: dict[str, Any]) -> None:
    """Checks the driver's screenshots hold a picture and copies them to $DCOMPLETE_VSCODE_SCREENSHOTS."""
    keep = os.environ.get("DCOMPLETE_VSCODE_SCREENSHOTS")
    for shot in map(Path, report["screenshots"]):
        assert shot.stat().st_size > 10_000, shot
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(keep) / shot.name)


@dataclass(frozen=True)
class Folders:
    """Where one test's files go: the workspace VS Code opens, the server's log, the accept/reject log."""

    workspace: Path
    server_log: Path
    feedback: Path


def folders(tmp_path: Path, files: dict[str, str]) -> Folders:
    """A workspace under `tmp_path` holding `files` (name -> text)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name, text in files.items():
        (workspace / name).write_text(text)
    return Folders(workspace, tmp_path / "server.log", tmp_path / "state" / "dcomplete" / "feedback.jsonl")


def run_driver(
    built_extension: Path, binary: Path, tmp_path: Path, where: Folders, driver: str, settings: dict[str, Any],
    plan: dict[str, Any],
) -> tuple[dict[str, Any], str]:
    """Runs the compiled `driver` (test/e2e/<driver>.e2e.ts) on `plan` in code-server with the packaged
    extension; screenshots go to `tmp_path`/screenshots."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    script = built_extension / "out" / "test" / "e2e" / f"{driver}.e2e.js"
    plan = {**plan, "screenshots": str(shots), "timeoutMs": WAIT_MS}
    return drive(binary, tmp_path, where.workspace, package_vsix(built_extension), settings, script, plan)


@pytest.fixture
def model(tmp_path: Path) -> str:
    chosen = os.environ.get("DCOMPLETE_VSCODE_MODEL")
    return chosen or str(make_one_token_checkpoint(tmp_path / "one_token_model"))


@pytest.mark.slow
def test_ghost_text_tab_and_fill_holes_in_code_server(
    built_extension: Path, code_server_binary: Path, tmp_path: Path, model: str
) -> None:
    where = folders(tmp_path, {"count_lines.ts": COMPLETION_SOURCE, "shapes.py": HOLES_SOURCE})
    plan = {
        "completionFile": str(where.workspace / "count_lines.ts"),
        "completionLine": COMPLETION_LINE,
        "typed": TYPED,
        "typeThrough": TYPE_THROUGH,
        "holesFile": str(where.workspace / "shapes.py"),
        "readyPattern": rf"{re.escape(Path(model).name)} · cpu",
        "statusPattern": rf"{re.escape(Path(model).name)} · cpu · \d+(\.\d)? m?s",
    }
    server_log, feedback = where.server_log, where.feedback
    settings = user_settings(model, server_log)
    report, logs = run_driver(built_extension, code_server_binary, tmp_path, where, "codeServer", settings, plan)
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

    keep_screenshots(report)


# Next edits: the user replaces JsonResponse with self.render on one line; the server's next edit does the
# same on another line that still has it (tests/support/next_edit_sample.py).
EDIT_LINE = 7  # 0-based
EDITED = VIEWS.replace(OLD + '({"error"', NEW + '({"error"', 1)  # the text after the user's edit
INDENT_SOURCE = "def total(values):\nreturn sum(values)\n"  # Tab at the start of line 2 indents it


def inline_edits(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every edit the server sent in a textDocument/copilotInlineEdit result."""
    results = [m.get("result") for m in messages]
    return [edit for r in results if isinstance(r, dict) and isinstance(r.get("edits"), list) for edit in r["edits"]]


@pytest.mark.slow
def test_next_edit_tab_to_jump_tab_to_apply_in_code_server(
    built_extension: Path, code_server_binary: Path, tmp_path: Path
) -> None:
    where = folders(tmp_path, {"views.py": VIEWS, "total.py": INDENT_SOURCE})
    plan = {
        "file": str(where.workspace / "views.py"),
        "editLine": EDIT_LINE + 1,
        "editColumn": VIEWS.split("\n")[EDIT_LINE].index(OLD) + 1,
        "oldText": OLD,
        "newText": NEW,
        "indentFile": str(where.workspace / "total.py"),
        "indentLine": 2,
        "readyPattern": "default · cpu",
    }
    # The bundled model, eager next edits, and no ghost text: Tab is never VS Code's to take here.
    settings = {**user_settings("default", where.server_log), "dcomplete.nextEdit.aggressiveness": "high",
                "editor.inlineSuggest.enabled": False}
    report, logs = run_driver(built_extension, code_server_binary, tmp_path, where, "nextEdit", settings, plan)
    server_log = where.server_log

    # The second Tab applied exactly the edit the server sent, and ran its command: the server counted it.
    accepted = [e for e in map(json.loads, where.feedback.read_text().splitlines()) if e["event"] == "accepted"]
    assert len(accepted) == 1, f"the accept command ran {len(accepted)} times; {logs}"
    sent = inline_edits(sent_messages(server_log))
    [edit] = [e for e in sent if e["command"]["arguments"] == [accepted[0]["itemId"]]]
    # after the edit was dismissed, "Show the next edit" asked again and got the same edit
    assert [(e["range"], e["text"]) for e in sent[:2]] == [(edit["range"], edit["text"])] * 2, sent
    after = report["afterApply"]
    assert after == apply_edits(EDITED, [{"range": edit["range"], "newText": edit["text"]}]), logs
    start = edit["range"]["start"]
    target = start["line"]
    assert target != EDIT_LINE and OLD in EDITED.split("\n")[target], edit
    assert NEW in after.split("\n")[target] and after.count(OLD) == EDITED.count(OLD) - 1
    ast.parse(after)
    assert "'textDocument/didShowInlineEdit' received" in server_log.read_text(), logs

    # What the page showed: the old name struck through with the new one after it on the target line and
    # the status bar's "Tab to jump"; nothing after Escape; the same again after "Show the next edit"; the
    # cursor on the target line after the first Tab, then "Tab to apply".
    shown = report["shown"]
    assert shown["hint"].endswith(f"Tab to jump to line {target + 1}"), shown
    assert "".join(shown["struck"]) == OLD, shown
    assert [line for line in shown["lines"] if OLD + NEW in line], shown
    assert report["afterEscape"] == {"hints": [], "struck": []}, report
    assert report["shownAgain"] == shown, report
    assert report["jumpedTo"] == f"Ln {target + 1}, Col {start['character'] + 1}", report
    assert report["hintAtTarget"].endswith("Tab to apply next edit"), report

    # With no next edit shown, Tab does what it always did.
    assert report["hintBeforeIndent"] == [], report
    assert report["afterIndent"] == INDENT_SOURCE.replace("\nreturn", "\n    return"), report
    keep_screenshots(report)
