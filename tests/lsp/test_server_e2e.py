"""The server process over stdio with a tiny random checkpoint: protocol behaviour end to end, once with
the model in the server and once behind a `dcomplete engine` the server reaches over HTTP.

A random model writes gibberish, so completions are requested inside comments, where any single line
keeps the file parsing; what is asserted is what the server promises (ranges, parsing, cancellation,
supersession, debounce, feedback), not the quality of the text.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path

import pytest
import pytest_asyncio
import tree_sitter
import tree_sitter_python
from lsp_harness import ENGINE_MODES, Session, model_settings, start_server, wait_until
from lsprotocol import types
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = "file:///work/demo.py"
TEXT = 'name = "😀 你好"\nprint(name)\n'
COMMENT = "  # 说明 👍: "
FAST = {"steps": 0, "maxTokens": 8}
SLOW = {"steps": 4096, "maxTokens": 64}  # minutes of denoising unless cancelled


_unseen = itertools.count(FAST["maxTokens"] + 1)


def unseen(settings: dict[str, int]) -> dict[str, int]:
    """`settings` with a `maxTokens` no request has used yet: no suggestion the server remembers was
    computed under it, so the model runs."""
    return {**settings, "maxTokens": next(_unseen)}


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def parses(text: str) -> bool:
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    return not parser.parse(text.encode("utf-8")).root_node.has_error


def apply_inline(text: str, item: types.InlineCompletionItem) -> str:
    lines = text.split("\n")
    assert item.range is not None and item.range.start.line == item.range.end.line
    line = lines[item.range.start.line]
    units = line.encode("utf-16-le")
    start, end = item.range.start.character * 2, item.range.end.character * 2
    insert = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
    lines[item.range.start.line] = (
        units[:start].decode("utf-16-le") + insert + units[end:].decode("utf-16-le")
    )
    return "\n".join(lines)


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=ENGINE_MODES)
async def server(request: pytest.FixtureRequest, tiny_dream: Path, tmp_path_factory: pytest.TempPathFactory):
    with model_settings(request.param, tiny_dream) as model:
        async with start_server(tmp_path_factory.mktemp("server"), {**model, "debounceMs": 500, **FAST}) as session:
            yield await _edited(session)


async def _edited(session: Session) -> Session:
    await session.open(URI, TEXT)
    first_line = TEXT.split("\n")[0]
    await session.edit(URI, (0, utf16_length(first_line)), (0, utf16_length(first_line)), COMMENT)
    return session


def cursor() -> tuple[int, int]:
    return 0, utf16_length(TEXT.split("\n")[0] + COMMENT)


def current_text() -> str:
    first, rest = TEXT.split("\n", 1)
    return first + COMMENT + "\n" + rest


async def test_initialize_announces_every_provider(server: Session) -> None:
    capabilities = server.init.capabilities
    assert capabilities.inline_completion_provider is not None
    assert capabilities.completion_provider is not None
    assert capabilities.code_action_provider is not None
    assert capabilities.execute_command_provider is not None
    assert set(capabilities.execute_command_provider.commands) == {
        "dcomplete.regenerateSelection",
        "dcomplete.fillHoles",
        "dcomplete.refactorSelection",
        "dcomplete.accepted",
        "dcomplete.acceptedInlineEdit",
    }
    assert capabilities.position_encoding == types.PositionEncodingKind.Utf16
    sync = capabilities.text_document_sync
    assert (
        isinstance(sync, types.TextDocumentSyncOptions)
        and sync.change == types.TextDocumentSyncKind.Incremental
    )


async def test_inline_completion_on_emoji_and_cjk_line(server: Session) -> None:
    line, character = cursor()
    result = await asyncio.wait_for(server.inline(URI, line, character), 60)
    assert isinstance(result, types.InlineCompletionList) and 1 <= len(result.items) <= 3
    for item in result.items:
        assert item.range == types.Range(types.Position(line, character), types.Position(line, character))
        completed = apply_inline(current_text(), item)
        assert completed != current_text() and parses(completed)
        assert completed.split("\n")[1:] == current_text().split("\n")[1:]
    await wait_until(lambda: any("lastLatencyMs" in status for status in server.recorded.statuses))
    assert "lastLatencyMs" not in server.recorded.statuses[0]  # the first one announces the loaded model
    status = server.recorded.statuses[-1]
    assert status["model"] and status["device"] == "cpu" and status["lastLatencyMs"] >= 0
    assert status["inferences"] >= 1  # an invoked request with alternatives may run several batches

    accepted = result.items[0].command
    assert accepted is not None and accepted.command == "dcomplete.accepted"
    await server.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=accepted.command, arguments=accepted.arguments)
    )
    log = server.state_dir / "dcomplete" / "feedback.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert events[-1]["event"] == "accepted" and events[-1]["itemId"] == accepted.arguments[0]["itemId"]


OTHER_LANGUAGES = (
    ("file:///work/list.ts", "typescript", ('export function names(files: string[]): string[] {\n'
                                            "  // Sorted names: \n  return [...files].sort();\n}\n")),
    ("file:///work/list.go", "go", ("package files\n\nimport \"sort\"\n\nfunc Names(files []string) []string {\n"
                                    "\t// Sorted names: \n\tsort.Strings(files)\n\treturn files\n}\n")),
)


async def test_typescript_and_go_documents_are_completed(server: Session) -> None:
    """Every language of the table is announced and completed; each item keeps the file parsing with
    that language's grammar (the cursor is at the end of a comment, where a random model's line parses)."""
    from infill.languages import get_language

    announced = server.init.capabilities.experimental["dcomplete"]["languages"]
    assert {"python", "typescript", "typescriptreact", "go", "rust", "java", "csharp", "cpp"} <= set(announced)
    for uri, language_id, text in OTHER_LANGUAGES:
        await server.open(uri, text, language_id)
        line = 1 if language_id == "typescript" else 5
        character = len(text.split("\n")[line])
        result = await asyncio.wait_for(server.inline(uri, line, character, invoked=False), 120)
        assert isinstance(result, types.InlineCompletionList) and result.items, language_id
        for item in result.items:
            completed = apply_inline(text, item)
            assert completed != text and not get_language(language_id).parse(completed).root_node.has_error


async def test_completion_is_left_to_inline_completion_when_the_client_has_it(server: Session) -> None:
    line, character = cursor()
    result = await asyncio.wait_for(
        server.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line, character)
            )
        ),
        10,
    )
    assert isinstance(result, types.CompletionList) and len(result.items) == 0


async def test_a_burst_of_automatic_requests_runs_one_inference(server: Session) -> None:
    server.configure(**unseen(FAST))
    line, character = cursor()
    statuses_before = len(server.recorded.statuses)
    burst = []
    for _ in range(3):
        burst.append(asyncio.ensure_future(server.inline(URI, line, character, invoked=False)))
        await asyncio.sleep(0.02)
    first, second, last = await asyncio.wait_for(asyncio.gather(*burst), 60)
    assert len(first.items) == 0 and len(second.items) == 0
    assert len(last.items) == 1
    await wait_until(lambda: len(server.recorded.statuses) > statuses_before)
    await asyncio.sleep(0.3)
    assert len(server.recorded.statuses) == statuses_before + 1  # one completion reported, not three
    server.configure(**FAST)


async def test_cancel_request_stops_a_slow_inference(server: Session) -> None:
    await wait_until(lambda: server.recorded.statuses)  # the model is loaded: the job will start at once
    server.configure(**SLOW)
    line, character = cursor()
    slow = asyncio.ensure_future(server.inline(URI, line, character, msg_id="slow-cancelled"))
    await asyncio.sleep(1.0)
    server.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-cancelled"))
    with pytest.raises(JsonRpcException) as error:
        await asyncio.wait_for(slow, 10)
    assert error.value.code == -32800  # RequestCancelled
    server.configure(**unseen(FAST))
    started = time.perf_counter()
    result = await asyncio.wait_for(server.inline(URI, line, character), 60)
    assert isinstance(result, types.InlineCompletionList) and result.items
    assert time.perf_counter() - started < 10  # the 4096-step job did not keep the worker
    server.configure(**FAST)


async def test_a_newer_request_supersedes_the_older_one(server: Session) -> None:
    await wait_until(lambda: server.recorded.statuses)  # the model is loaded: the job will start at once
    server.configure(**SLOW)
    line, character = cursor()
    older = asyncio.ensure_future(server.inline(URI, line, character))
    await asyncio.sleep(1.0)
    server.configure(**FAST)
    newer = asyncio.ensure_future(server.inline(URI, line, character))
    superseded = await asyncio.wait_for(older, 10)
    assert (
        isinstance(superseded, types.InlineCompletionList) and len(superseded.items) == 0
    )  # empty, not an error
    answered = await asyncio.wait_for(newer, 60)
    assert answered.items


async def test_selected_completion_items_extend_the_selection(server: Session) -> None:
    line, character = cursor()
    selected = types.SelectedCompletionInfo(
        range=types.Range(types.Position(line, character), types.Position(line, character)), text="todo"
    )
    result = await asyncio.wait_for(
        server.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION,
            server.inline_params(URI, line, character, selected=selected),
        ),
        60,
    )
    assert result.items
    for item in result.items:
        assert item.range == selected.range and item.insert_text.startswith("todo")


async def test_settings_are_pulled_when_the_pushed_change_is_empty(server: Session) -> None:
    server.client.set_configuration({"debounceMs": "soon", **FAST}, section="dcomplete")
    shown_before = len(server.client.messages)
    server.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_until(lambda: len(server.client.messages) > shown_before)
    message = server.client.messages[-1]
    assert message.type == types.MessageType.Warning and "`debounceMs`" in message.message


async def test_an_opened_document_is_prefilled_while_the_user_reads_it(
    server: Session, request: pytest.FixtureRequest
) -> None:
    """In-process, a document opened and not asked about is prefilled; behind an engine server nothing is
    (the server keeps documents' caches from its own fills). (The fixture's document is asked about at once,
    so its own request prefills it: tests/lsp/test_slow_engine_e2e.py.)"""
    in_process = request.node.callspec.params["server"] == "in-process"
    read = "file:///work/read.py"
    await server.open(read, "import sys\n" + TEXT)
    deadline = time.monotonic() + (60 if in_process else 3)
    while True:
        answer = await server.client.protocol.send_request_async("dcomplete/documentState", {"uri": read})
        if answer.warmed is not None or time.monotonic() > deadline:  # pygls gives an object, not a dict
            break
        await asyncio.sleep(0.1)
    assert answer.warmed == (server.version if in_process else None) and answer.version == server.version


# -- suggestions the server already knows (lsp_server/suggestions.py) ------------------------------

NOTES = "value = 1  # the value: \nother = 2  # another one: \nlast = 3  # the last: \n"


def line_end(text: str, line: int) -> tuple[int, int]:
    return line, len(text.split("\n")[line])


def item_id(item: types.InlineCompletionItem) -> str:
    assert item.command is not None
    return item.command.arguments[0]["itemId"]


async def ask(server: Session, uri: str, place: tuple[int, int], invoked: bool = False) -> types.InlineCompletionItem | None:
    result = await asyncio.wait_for(server.inline(uri, *place, invoked=invoked), 60)
    return result.items[0] if result.items else None


async def first_suggestion(server: Session, uri: str, place: tuple[int, int]) -> types.InlineCompletionItem:
    """The model's suggestion at `place`, one that leaves something after its first three characters."""
    item = await ask(server, uri, place)
    assert item is not None and item.insert_text[3:].strip(), item
    return item


def inferences(server: Session) -> int:
    return max((status["inferences"] for status in server.recorded.statuses), default=0)


async def asked_and_ran(server: Session, uri: str, place: tuple[int, int]) -> None:
    """Asks at `place` and waits for the denoising run it needs."""
    runs = inferences(server)
    await ask(server, uri, place)
    await wait_until(lambda: inferences(server) > runs)


async def test_typing_through_a_suggestion_answers_its_rest_at_once_and_is_accepted_once(server: Session) -> None:
    uri = "file:///work/typed_through.py"
    await server.open(uri, NOTES)
    server.configure(**FAST, debounceMs=3000)
    line, character = line_end(NOTES, 0)
    item = await first_suggestion(server, uri, (line, character))
    suggestion, runs = item.insert_text, inferences(server)
    for typed in range(1, 4):
        await server.edit(uri, (line, character), (line, character), suggestion[typed - 1])
        character += utf16_length(suggestion[typed - 1])
        started = time.perf_counter()
        rest = await ask(server, uri, (line, character))
        assert time.perf_counter() - started < 3  # the debounce was not waited for
        assert rest is not None and item_id(rest) == item_id(item)
        assert rest.insert_text == suggestion[typed:]
        assert rest.range == types.Range(types.Position(line, character), types.Position(line, character))
    assert inferences(server) == runs  # no denoising run while typing through

    await server.edit(uri, (line, character), (line, character), rest.insert_text)
    await server.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=rest.command.command, arguments=rest.command.arguments)
    )
    log = server.state_dir / "dcomplete" / "feedback.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    mine = [event["event"] for event in events if event.get("itemId") == item_id(item)]
    assert mine == ["accepted"]
    server.configure(**FAST)


async def test_a_mismatching_keystroke_drops_the_suggestion_and_undo_finds_it_in_the_cache(server: Session) -> None:
    uri = "file:///work/mismatch.py"
    await server.open(uri, NOTES)
    server.configure(**FAST, debounceMs=0)
    here = line_end(NOTES, 1)
    item = await first_suggestion(server, uri, here)
    wrong = "§" if not item.insert_text.startswith("§") else "¶"
    runs = inferences(server)
    await server.edit(uri, here, here, wrong)
    other = await ask(server, uri, (here[0], here[1] + 1))
    assert other is None or item_id(other) != item_id(item)
    await wait_until(lambda: inferences(server) > runs)  # the model ran for the new text

    await server.edit(uri, here, (here[0], here[1] + 1), "")  # undo
    runs = inferences(server)
    again = await ask(server, uri, here)
    assert again is not None and again.insert_text == item.insert_text and item_id(again) != item_id(item)
    assert inferences(server) == runs

    await asked_and_ran(server, uri, line_end(NOTES, 2))  # move away: the model runs there
    runs = inferences(server)
    back = await ask(server, uri, here)  # and back
    assert back is not None and back.insert_text == item.insert_text
    assert inferences(server) == runs
    server.configure(**FAST, debounceMs=500)


async def test_the_cache_forgets_the_place_used_longest_ago(server: Session) -> None:
    uri = "file:///work/bounded.py"
    await server.open(uri, NOTES)
    server.configure(**unseen(FAST), suggestionCache=2, debounceMs=0)
    places = [line_end(NOTES, line) for line in range(3)]
    for place in places:
        await asked_and_ran(server, uri, place)
    runs = inferences(server)
    await ask(server, uri, places[2])  # the place used last: still known (the shown suggestion)
    await ask(server, uri, places[1])  # one place back: from the cache
    assert inferences(server) == runs
    await asked_and_ran(server, uri, places[0])  # evicted when the third place was remembered
    server.configure(**FAST, suggestionCache=64, debounceMs=500)
