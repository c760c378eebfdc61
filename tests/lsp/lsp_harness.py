"""End-to-end harness: the real server process over stdio, driven by pytest-lsp's client.

`start_server` launches `python -m lsp_server` with chosen initializationOptions and client
capabilities; the client records `workspace/applyEdit`, `$/progress`, `window/showMessage` and
`dcomplete/status` so tests can assert on what the server sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

REPO = Path(__file__).resolve().parents[2]


ENGINE_MODES = ("in-process", "engine")


@contextlib.contextmanager
def model_settings(mode: str, model: Path) -> Iterator[dict[str, Any]]:
    """Settings that run `model` inside the language server ("in-process") or behind a real
    `dcomplete engine` subprocess that the server reaches over HTTP ("engine")."""
    if mode == "in-process":
        yield {"model": str(model)}
        return
    from tests.support.engine_process import EngineProcess

    with EngineProcess(["--model", str(model)]) as engine:
        yield {"engineUrl": engine.url}


def capabilities(encodings: list[str] | None = None, inline: bool = True) -> types.ClientCapabilities:
    """What VS Code 1.9x with languageclient 10 announces, for the parts the server reads; without
    `inline`, a client from before LSP 3.18."""
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(),
            inline_completion=types.InlineCompletionClientCapabilities() if inline else None,
            completion=types.CompletionClientCapabilities(
                completion_item=types.ClientCompletionItemOptions(
                    documentation_format=[types.MarkupKind.Markdown], preselect_support=True
                )
            ),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=[types.CodeActionKind.RefactorRewrite]
                    )
                )
            ),
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            configuration=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            execute_command=types.ExecuteCommandClientCapabilities(),
        ),
    )


@dataclass
class Recorded:
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)


def _as_dict(params: Any) -> dict[str, Any]:
    """pygls hands custom notifications' params over as namedtuples."""
    return params if isinstance(params, dict) else dict(params._asdict())


@dataclass
class Session:
    client: LanguageClient
    recorded: Recorded
    init: types.InitializeResult
    state_dir: Path
    version: int = 1

    async def open(self, uri: str, text: str, language_id: str = "python") -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=language_id, version=self.version, text=text)
            )
        )

    async def edit(self, uri: str, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        self.version += 1
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(*start), types.Position(*end)), text=text
        )
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.version), [change]
            )
        )

    def configure(self, **settings: Any) -> None:
        self.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"dcomplete": settings})
        )

    def inline_params(
        self,
        uri: str,
        line: int,
        character: int,
        invoked: bool = True,
        selected: types.SelectedCompletionInfo | None = None,
    ) -> types.InlineCompletionParams:
        kind = (
            types.InlineCompletionTriggerKind.Invoked
            if invoked
            else types.InlineCompletionTriggerKind.Automatic
        )
        return types.InlineCompletionParams(
            context=types.InlineCompletionContext(trigger_kind=kind, selected_completion_info=selected),
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        )

    async def inline(
        self, uri: str, line: int, character: int, invoked: bool = True, msg_id: str | None = None
    ) -> Any:
        return await self.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, self.inline_params(uri, line, character, invoked), msg_id
        )


def _converter() -> Any:
    """pygls' converter, except that a CodeAction carrying a `command` object stays a CodeAction
    (lsprotocol 2025.0.0 reads any object with a `command` key as a Command)."""
    converter = default_converter()

    def code_action_or_command(value: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(value.get("command"), str):
            return converter.structure(value, types.Command)
        return converter.structure(value, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, code_action_or_command)
    return converter


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=_converter)
    register_lsp_features(client)
    return client


@contextlib.asynccontextmanager
async def start_server(
    tmp_path: Path, settings: dict[str, Any], encodings: list[str] | None = None, inline: bool = True,
    folders: list[Path] | None = None,
) -> AsyncIterator[Session]:
    """The server with `tmp_path` as its rootUri and `folders` (if any) as its workspaceFolders."""
    client = make_client()
    recorded = Recorded()

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        recorded.edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature("dcomplete/status")
    def status(params: Any) -> None:
        recorded.statuses.append(_as_dict(params))

    state_dir = tmp_path / "state"
    env = {**os.environ, "XDG_STATE_HOME": str(state_dir), "PYTHONPATH": str(REPO)}
    await client.start_io(sys.executable, "-m", "lsp_server", env=env, cwd=str(REPO))
    try:
        init = await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=capabilities(encodings, inline),
                    initialization_options={"dcomplete": settings},
                    root_uri=tmp_path.as_uri(),
                    workspace_folders=[types.WorkspaceFolder(f.as_uri(), f.name) for f in folders or []] or None,
                )
            ),
            60,
        )
        yield Session(client, recorded, init, state_dir)
        await asyncio.wait_for(client.shutdown_session(), 30)
    except BaseException:
        # stop() waits for the server to exit, which it never does unless told to: a failed test would hang
        process = client._server
        if process is not None and process.returncode is None:
            process.kill()
        raise
    finally:
        await client.stop()


async def wait_until(predicate: Any, timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting for the server")
        await asyncio.sleep(0.02)


class RawConnection:
    """A bare JSON-RPC client over the server's stdio, for messages a typed client refuses to send."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 0

    @classmethod
    async def start(cls, tmp_path: Path, extra_env: dict[str, str] | None = None) -> RawConnection:
        env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(REPO), **(extra_env or {})}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lsp_server",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
            cwd=str(REPO),
        )
        return cls(process)

    def send(self, message: dict[str, Any]) -> None:
        import json

        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> dict[str, Any]:
        import json

        assert self.process.stdout is not None
        length = 0
        while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(await self.process.stdout.readexactly(length))

    async def request(self, method: str, params: Any, timeout: float = 60.0) -> dict[str, Any]:
        """Send a request and return its response message, recording notifications on the way and
        answering the server's own requests with null."""
        self._next_id += 1
        msg_id = self._next_id
        self.send({"id": msg_id, "method": method, "params": params})
        while True:
            message = await asyncio.wait_for(self._read(), timeout)
            if message.get("id") == msg_id and "method" not in message:
                return message
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            await asyncio.wait_for(self.process.wait(), 10)
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
