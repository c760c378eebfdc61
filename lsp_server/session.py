"""Server state and the request flows that join documents, settings, the scheduler and the model.

Handlers in server.py call one method here each. Everything runs on the event loop except the
closures handed to the scheduler, which run on its worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from infill.feedback import FeedbackLog
from infill.windows import plan_completion

from .completion import (
    CompletionQuery,
    Suggestion,
    build_query,
    fallback_items,
    inline_items,
    new_item_id,
    to_suggestion,
)
from .documents import Document, DocumentStore, TextChange, UnknownDocument, edited_line
from .failures import FailureReporter
from .inference import InferenceBackend, LoadFailure, Outcome
from .next_edits import NextEditMemory
from .positions import normalize_encoding
from .repo_context import WorkspaceContext
from .scheduler import CancelCheck, InferenceScheduler, Ticket
from .settings import SECTION, Settings, parse_settings
from .suggestions import Placed, SuggestionMemory

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger(__name__)
STATUS_NOTIFICATION = "dcomplete/status"
CALIBRATION_QUIET_S = 0.3
"""How long the worker must have been free before a piece of the kernels' measurement runs."""
INVOKED_ALTERNATIVES = 3
T = TypeVar("T")


class Session:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self._background: set[asyncio.Task[Any]] = set()
        self.documents = DocumentStore()
        self.settings = Settings()
        self.scheduler = InferenceScheduler()
        self.backend = InferenceBackend()
        self.feedback = FeedbackLog()
        self.memory = SuggestionMemory(self.settings.suggestion_cache)
        self.context = WorkspaceContext(self._workspace_folders)
        self.next_edits = NextEditMemory()
        self.last_latency_ms: int | None = None
        self.calibration: str | None = None  # "measuring" or "done" when this process measured its kernels
        self._calibrating = False
        self._tickets_by_request: dict[Any, Ticket] = {}
        self._cancelled_early: dict[Any, None] = {}  # insertion-ordered, trimmed to the newest 256
        self._pending_problems: list[str] = []
        self._warmed: dict[str, int] = {}  # uri -> the version prefilled after it was opened
        self.failures = FailureReporter(
            lambda kind, message: self.server.window_show_message(types.ShowMessageParams(kind, message)),
            lambda error: self._notify_status(error),
        )

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Runs `work` in the background, holding the task until it ends (the event loop keeps only a
        weak reference, so an unheld task can be collected mid-way)."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- lifecycle and settings -------------------------------------------------------------------

    def initialize(self, params: types.InitializeParams) -> None:
        self.documents.encoding = normalize_encoding(self.server.workspace.position_encoding)
        self.settings, self._pending_problems = parse_settings(params.initialization_options)
        self.memory.cache.resize(self.settings.suggestion_cache)

    def initialized(self) -> None:
        self._show_problems(self._pending_problems)
        self._pending_problems = []
        self._spawn(self._load_model())

    async def change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if (
            not (isinstance(raw, dict) and isinstance(raw.get(SECTION), dict))
            and self._can_pull_configuration()
        ):
            pulled = await self.server.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
            raw = pulled[0] if pulled else None
        previous = self.settings
        self.settings, problems = parse_settings(raw, base=previous)
        self.memory.cache.resize(self.settings.suggestion_cache)
        self._show_problems(problems)
        if previous.engine_key != self.settings.engine_key:
            await self._load_model()

    def _workspace_folders(self) -> list[str]:
        """The workspace folders' URIs (pygls follows `workspace/didChangeWorkspaceFolders`), `rootUri` for a
        client that sends no folders."""
        workspace = self.server.workspace
        return [*(folder.uri for folder in workspace.folders.values()), *filter(None, [workspace.root_uri])]

    def _can_pull_configuration(self) -> bool:
        workspace = self.server.client_capabilities.workspace
        return bool(workspace and workspace.configuration)

    def _show_problems(self, problems: list[str]) -> None:
        for problem in problems:
            self.server.window_show_message(types.ShowMessageParams(types.MessageType.Warning, problem))

    async def _load_model(self) -> None:
        settings = self.settings
        failure = await self.scheduler.run_exclusive(lambda: self.backend.ensure_loaded(settings))
        if failure is None:
            self.failures.loaded()
            if self.backend.calibrating and not self._calibrating:
                self._spawn(self._calibrate())
        else:
            self.failures.unavailable(failure)

    async def _calibrate(self) -> None:
        """Measure this machine's kernels (a first start serves with default ones meanwhile) in pieces of
        about one forward, each once the worker has been free for `CALIBRATION_QUIET_S`; the status says
        `calibration: measuring`, then `done`."""
        self._calibrating = True
        self.calibration = "measuring"
        self._notify_status()
        try:
            while self.backend.calibrating:
                if await self.scheduler.run_when_idle(self.backend.calibrate_step, CALIBRATION_QUIET_S) is None:
                    return  # shut down: the next start measures again
        finally:
            self._calibrating = False
        self.calibration = "done"
        self._notify_status()

    def shutdown(self) -> None:
        self.scheduler.shutdown()

    # -- documents --------------------------------------------------------------------------------

    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        document = self.documents.open(item.uri, item.language_id, item.version, item.text)
        self.context.saw(item.uri, document.text)
        if item.language_id in self.settings.languages:
            self._spawn(self._warm(item.uri))

    async def _warm(self, uri: str) -> None:
        """Prefill the document's canvas for a completion at its end while the user reads it (a cursor anywhere
        then reuses the text above it), on its own job key, so a completion queues behind it; skipped when a
        completion of the document already waits (asked at once), which prefills its own window."""
        document = self.documents.get(uri)
        text, settings, language, version = document.text, self.settings, document.language_id, document.version
        context = self.context.source(settings, uri, text, document.language)

        def work(cancel: CancelCheck) -> bool:
            return not cancel() and not self.scheduler.waiting(uri) and self.backend.warm(
                text, len(text), settings, language, uri, context)

        ticket = self.scheduler.ticket(f"warm:{uri}")
        try:
            warmed = await self.scheduler.run(ticket, lambda cancel: self.backend.run(settings, work, cancel))
        except Exception:  # a warm-up is an optimisation: a failure shows in the request that follows
            logger.exception("warming %s failed", uri)
            return
        if warmed is True and uri in self.documents:
            self._warmed[uri] = version

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        changes = [
            TextChange(
                change.text,
                (change.range.start.line, change.range.start.character),
                (change.range.end.line, change.range.end.character),
            )
            if isinstance(change, types.TextDocumentContentChangePartial)
            else TextChange(change.text)
            for change in params.content_changes
        ]
        before = self.documents.get(params.text_document.uri).text
        document = self.documents.change(params.text_document.uri, params.text_document.version, changes)
        self.context.saw(document.uri, document.text, edited_line(changes))
        self.next_edits.history.changed(document.uri, before, document.text, asyncio.get_running_loop().time())

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self.documents.close(uri)
        self.context.closed(uri)
        self._warmed.pop(uri, None)
        self.memory.forget(uri)
        self.next_edits.forget(uri)
        self._spawn(self.scheduler.run_exclusive(lambda: self.backend.forget(uri)))

    def document(self, uri: str) -> Document:
        try:
            return self.documents.get(uri)
        except UnknownDocument as error:
            raise JsonRpcInvalidParams(str(error)) from None

    def document_state(self, params: Any) -> dict[str, Any]:
        """`dcomplete/documentState` {uri}: the server's copy of a document as {uri, version, sha256,
        length, warmed} (length in code points; `warmed`: the version prefilled after it was opened, or
        null), so a client can check that both copies agree."""
        uri = params.get("uri") if isinstance(params, dict) else getattr(params, "uri", None)
        if not isinstance(uri, str):
            raise JsonRpcInvalidParams("dcomplete/documentState: params need a string `uri`")
        document = self.document(uri)
        return {"uri": uri, "version": document.version, "sha256": document.digest(), "length": len(document.text),
                "warmed": self._warmed.get(uri)}

    # -- jobs -------------------------------------------------------------------------------------

    def cancel_request(self, msg_id: Any) -> None:
        """`$/cancelRequest`: stop the job the request started (if any) at its next denoising step."""
        ticket = self._tickets_by_request.get(msg_id)
        if ticket is not None:
            ticket.stop()
        else:  # its job has not started yet (or the request has already been answered)
            self._cancelled_early[msg_id] = None
            if len(self._cancelled_early) > 256:
                del self._cancelled_early[next(iter(self._cancelled_early))]

    async def run_job(
        self,
        key: str,
        work: Callable[[CancelCheck], T],
        debounce_s: float = 0.0,
        on_ticket: Callable[[Ticket], None] | None = None,
    ) -> T | None:
        """Run model work for `key` (supersedes the previous job on it); None when it was cancelled,
        superseded, or the model is unavailable (reported once)."""
        ticket = self.scheduler.ticket(key)
        if on_ticket is not None:
            on_ticket(ticket)
        msg_id = self.server.protocol.msg_id
        self._tickets_by_request[msg_id] = ticket
        if msg_id in self._cancelled_early:
            del self._cancelled_early[msg_id]
            ticket.stop()
        settings = self.settings

        def with_model(cancel: CancelCheck) -> T | LoadFailure:
            return self.backend.run(settings, work, cancel)

        try:
            result = await self.scheduler.run(ticket, with_model, debounce_s)
        except (JsonRpcException, ValueError):  # bad input: the caller names it
            raise
        except Exception as error:  # the engine failed: this request gets an error, the server stays up
            raise self.failures.failed(error) from None
        finally:
            self._tickets_by_request.pop(msg_id, None)
        self.failures.succeeded()
        if isinstance(result, LoadFailure):
            self.failures.unavailable(result)
            return None
        self.failures.reachable_again(self.backend.loaded)
        return result

    # -- completion -------------------------------------------------------------------------------

    async def _suggest(
        self,
        uri: str,
        position: types.Position,
        automatic: bool,
        alternatives: int,
        selected: types.SelectedCompletionInfo | None,
    ) -> tuple[CompletionQuery, list[Suggestion], list[str]]:
        """Suggestions at `position` and their item ids, offered to the feedback log. What the memory
        knows (typed through, or cached) answers at once; otherwise the model runs."""
        document = self.document(uri)
        settings = self.settings
        query = build_query(document.text, position, self.documents.encoding, selected)
        if document.language_id not in settings.languages:
            return query, [], []
        invoked, results = alternatives > 1, settings.results_key
        recalled = self.memory.recall(uri, query, document.language_id, results, invoked)
        if recalled is not None:
            self.scheduler.ticket(uri).stop()  # this answer supersedes a job still running for the document
            suggestions = list(recalled.suggestions)
            item_ids = list(recalled.item_ids or [new_item_id() for _ in suggestions])
            logger.debug("answered %s from the %s suggestion", uri, recalled.source)
        else:
            computed = await self._compute(uri, query, document, automatic, alternatives)
            if computed is None:
                return query, [], []
            suggestions = computed
            item_ids = [new_item_id() for _ in suggestions]
        placed = Placed(query.text, query.offset, tuple(suggestions), tuple(item_ids), results, invoked)
        self.memory.shown(uri, placed if query.selection is None else None)
        if suggestions:
            self.feedback.offered(uri, item_ids)
        return query, suggestions, item_ids

    async def _compute(
        self, uri: str, query: CompletionQuery, document: Document, automatic: bool, alternatives: int
    ) -> list[Suggestion] | None:
        """The model's suggestions, remembered for their place; None when the request was cancelled or
        superseded, or the document changed meanwhile. Automatic requests are debounced; invoked ones (a
        user gesture) start at once."""
        settings = self.settings
        version = document.version
        debounce_s = settings.debounce_ms / 1000 if automatic else 0.0
        started = time.perf_counter()
        invoked = alternatives > 1
        # Planned here, not on the worker: a place with nothing to complete answers at once instead of
        # waiting for the step the worker is in, and stops the job still running for older text.
        spot = plan_completion(query.text, query.offset, language=document.language)
        if spot is None:
            self.scheduler.ticket(uri).stop()
            self.memory.remember(query, document.language_id, settings.results_key, invoked, ())
            self._notify_status()
            return []

        context = self.context.source(settings, uri, query.text, document.language)

        def work(cancel: CancelCheck) -> Outcome:
            return self.backend.complete(query.text, spot, settings, document.language, uri, alternatives, cancel,
                                         context, automatic)

        outcome = await self.run_job(uri, work, debounce_s)
        if outcome is None or outcome.cancelled:
            return None
        suggestions: list[Suggestion] = []
        for replacement in outcome.replacements:
            suggestion = to_suggestion(query, replacement, settings.multiline)
            if suggestion is not None and suggestion not in suggestions:
                suggestions.append(suggestion)
        self.memory.remember(query, document.language_id, settings.results_key, invoked, tuple(suggestions))
        if document.version != version:
            return None
        self.last_latency_ms = round((time.perf_counter() - started - debounce_s) * 1000)
        self._notify_status()
        return suggestions

    async def inline_completion(self, params: types.InlineCompletionParams) -> types.InlineCompletionList:
        automatic = params.context.trigger_kind == types.InlineCompletionTriggerKind.Automatic
        uri = params.text_document.uri
        alternatives = 1 if automatic else INVOKED_ALTERNATIVES
        query, suggestions, item_ids = await self._suggest(
            uri, params.position, automatic, alternatives, params.context.selected_completion_info
        )
        return types.InlineCompletionList(
            items=inline_items(uri, query, suggestions, self.documents.encoding, item_ids)
        )

    async def completion(self, params: types.CompletionParams) -> types.CompletionList:
        """The fallback for clients without inline completion. A client that has it (VS Code, Neovim
        0.12) would otherwise pay for a second inference on every keystroke, so it gets no items."""
        if self._client_has_inline_completion():
            return types.CompletionList(is_incomplete=False, items=[])
        uri = params.text_document.uri
        automatic = (
            params.context is None or params.context.trigger_kind != types.CompletionTriggerKind.Invoked
        )
        query, suggestions, item_ids = await self._suggest(uri, params.position, automatic, 1, selected=None)
        return types.CompletionList(
            is_incomplete=True,
            items=fallback_items(uri, query, suggestions, self.documents.encoding, item_ids),
        )

    def _client_has_inline_completion(self) -> bool:
        text_document = self.server.client_capabilities.text_document
        return bool(text_document and text_document.inline_completion is not None)

    def _notify_status(self, error: str | None = None) -> None:
        """{model, device, inferences, lastLatencyMs, calibration, error}; before the first completion the
        latency is left out; `calibration` ("measuring", then "done") only when this process measures the
        machine's kernels; `error` only in the one notification that reports a failure (failures.py)."""
        status: dict[str, object] = {
            "model": self.settings.model,
            "device": self.backend.device_name,
            "inferences": self.backend.runs,
        }
        if self.settings.engine_url:  # the engine server's model, whatever `model` says
            status["model"] = self.backend.model_name
            status["engine"] = "connected" if self.backend.loaded else "unreachable"
        if self.calibration is not None:
            status["calibration"] = self.calibration
        if error is not None:
            status["error"] = error
        if self.last_latency_ms is not None:
            status["lastLatencyMs"] = self.last_latency_ms
        self.server.protocol.notify(STATUS_NOTIFICATION, status)
