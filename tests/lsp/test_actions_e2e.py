"""Code actions and commands end to end: one `workspace/applyEdit` per command carrying every spot,
work-done progress, and cancellation from the progress UI and from `$/cancelRequest`; once with the model
in the server and once behind a `dcomplete engine`. The client is
one from before LSP 3.18 (no inline completion), so it also gets the `textDocument/completion` fallback.

The checkpoint writes one identifier token everywhere (see `make_one_token_checkpoint`), so every
filled hole parses and the number of spots in the edit is known in advance.
"""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio
import tree_sitter
import tree_sitter_python
from lsp_harness import ENGINE_MODES, Session, model_settings, start_server, wait_until
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.support.checkpoints import make_one_token_checkpoint

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = "file:///work/holes.py"
TEXT = (
    "def area(w, h):\n"
    "    # <|hole|>\n"
    "    return result\n"
    "\n"
    "\n"
    "class Shape:  # 形状 🔷\n"
    "    # <|hole:8|>\n"
    "    name = 'shape'\n"
)
HOLE_LINES = [1, 6]
FAST = {"steps": 0, "maxTokens": 16}


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")
    offsets = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines))]

    def offset(position: types.Position) -> int:
        line = lines[position.line]
        return offsets[position.line] + len(
            line.encode("utf-16-le")[: position.character * 2].decode("utf-16-le")
        )

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def parses(text: str) -> bool:
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    return not parser.parse(text.encode("utf-8")).root_node.has_error


@pytest.fixture(scope="module")
def one_token_model(tmp_path_factory: pytest.TempPathFactory):
    return make_one_token_checkpoint(tmp_path_factory.mktemp("one_token_model"))


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=ENGINE_MODES)
async def server(request: pytest.FixtureRequest, one_token_model, tmp_path_factory: pytest.TempPathFactory):
    with model_settings(request.param, one_token_model) as model:
        async with start_server(tmp_path_factory.mktemp("server"), {**model, **FAST}, inline=False) as session:
            await session.open(URI, TEXT)
            yield session


def whole_file() -> types.Range:
    return types.Range(types.Position(0, 0), types.Position(len(TEXT.split("\n")) - 1, 0))


async def code_actions(server: Session, selection: types.Range) -> dict[str, types.CodeAction]:
    actions = await server.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=selection,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return {action.command.command: action for action in actions or [] if action.command}


async def run(server: Session, command: types.Command, msg_id: str | None = None):
    params = types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    return await server.client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id)


async def test_fill_holes_applies_every_spot_in_one_edit(server: Session) -> None:
    actions = await code_actions(server, whole_file())
    assert set(actions) == {
        "dcomplete.regenerateSelection",
        "dcomplete.refactorSelection",
        "dcomplete.fillHoles",
    }
    edits_before = len(server.recorded.edits)
    result = await asyncio.wait_for(run(server, actions["dcomplete.fillHoles"].command), 60)
    assert result == {"applied": True, "spots": 2}
    assert len(server.recorded.edits) == edits_before + 1
    [document_edit] = server.recorded.edits[-1].edit.document_changes
    assert document_edit.text_document.uri == URI and document_edit.text_document.version == 1
    lines = TEXT.split("\n")
    assert [
        (e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character)
        for e in document_edit.edits
    ] == [(n, 4, n, len(lines[n])) for n in HOLE_LINES]
    filled = apply_edits(TEXT, list(document_edit.edits))
    assert "<|hole" not in filled and parses(filled)

    [token] = [t for t, reports in server.client.progress_reports.items() if reports]
    kinds = [type(report).__name__ for report in server.client.progress_reports[token]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    server.client.progress_reports.clear()


async def test_regenerate_and_refactor_selection_edit_only_the_selected_lines(server: Session) -> None:
    # The blank line between the function and the class: the one-token model writes its identifier at
    # column 0, which keeps the file parsing only outside a block (in place of `return result` it would
    # leave `area` without a body, and the server drops a result that stops the file parsing).
    selection = types.Range(types.Position(3, 0), types.Position(4, 0))
    actions = await code_actions(server, selection)
    assert "dcomplete.fillHoles" in actions  # the file has holes wherever the selection is
    result = await asyncio.wait_for(run(server, actions["dcomplete.regenerateSelection"].command), 60)
    assert result == {"applied": True, "spots": 1}
    [edit] = server.recorded.edits[-1].edit.document_changes[0].edits
    assert edit.range.start == types.Position(3, 0) and edit.range.end.line <= 4

    refactor = actions["dcomplete.refactorSelection"].command
    with pytest.raises(JsonRpcException, match="needs an `instruction`"):
        await run(server, refactor)
    refactor.arguments[0]["instruction"] = "compute the area"
    result = await asyncio.wait_for(run(server, refactor), 60)
    assert result == {"applied": True, "spots": 1}
    server.client.progress_reports.clear()


async def test_cancelling_the_progress_stops_the_command(server: Session) -> None:
    await wait_until(lambda: server.recorded.statuses)  # the model is loaded: the job will start at once
    server.configure(steps=4096, maxTokens=64)  # minutes of denoising unless cancelled
    edits_before = len(server.recorded.edits)
    actions = await code_actions(server, whole_file())
    running = asyncio.ensure_future(run(server, actions["dcomplete.fillHoles"].command))
    await wait_until(lambda: any(server.client.progress_reports.values()))
    [token] = list(server.client.progress_reports)
    await asyncio.sleep(0.5)
    server.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    assert await asyncio.wait_for(running, 10) is None
    assert len(server.recorded.edits) == edits_before
    server.client.progress_reports.clear()

    running = asyncio.ensure_future(run(server, actions["dcomplete.fillHoles"].command, msg_id="fill-cancel"))
    await wait_until(lambda: any(server.client.progress_reports.values()))
    await asyncio.sleep(0.5)
    server.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="fill-cancel"))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(running, 10)
    server.configure(**FAST)
    result = await asyncio.wait_for(run(server, actions["dcomplete.fillHoles"].command), 15)
    assert result["spots"] == 2
    await asyncio.sleep(0.2)
    assert len(server.recorded.edits) == edits_before + 1  # only the last run applied anything


async def test_completion_fallback_inserts_through_a_text_edit(server: Session) -> None:
    line = TEXT.split("\n")[5]  # "class Shape:  # 形状 🔷", a comment to complete
    end = types.Position(5, len(line.encode("utf-16-le")) // 2)
    result = await asyncio.wait_for(
        server.client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=URI), position=end)
        ),
        60,
    )
    assert isinstance(result, types.CompletionList) and len(result.items) == 1
    item = result.items[0]
    assert isinstance(item.text_edit, types.TextEdit) and item.text_edit.range == types.Range(end, end)
    assert set(item.text_edit.new_text) == {"x"} and item.label == item.text_edit.new_text
    assert item.command is not None and item.command.command == "dcomplete.accepted"
