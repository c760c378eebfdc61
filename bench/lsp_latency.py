"""LSP latency: the real server over stdio, a scripted typing session at human pace on a real file.

    python -m bench.lsp_latency [--model default] [--keystrokes 240] [--gap-ms 120] [--debounce-ms N]
                                [--automatic-until statement|block] [--automatic-ms N]
                                [--pauses 40] [--accepts 20] [--threads 2] [--context on|off]

A pygls client starts `python -m lsp_server`, opens the first part of a real Python file (bench.workload
sources; at its own path, with the folder of its top-level package as the workspace, so that `--context on`,
the server's default, reads what it imports) and types the next characters one keystroke at a time, `--gap-ms` apart (with a little jitter),
sending didChange and then an automatic inlineCompletion request for every keystroke, as an editor does.
Latency is request to response for every request; a request superseded by the next keystroke answers
empty at once, so the table splits answers that carried a completion from those that did not. Denoising
runs are read from the `inferences` counter of the server's `dcomplete/status` notification (a request
mid-word runs none; a superseded run counts).

The client keeps what an editor would show (the newest answer that matches the document, minus what was
typed since): a keystroke that types the next character of it is a **typed-through** keystroke, and
its latency is reported apart, with how many of them the server answered with the same item.

Then the pauses: at the ends of the `--pauses` lines that follow (where a user stops typing and waits), the
client sets the document to the text before that point and asks once, waiting for the answer:
the latency of a line completion as the user sees it, warm. Reported apart: the model's load (the server
loads it when it starts; the session waits for it), how long after the file was opened the server had
prefilled it (the user reads it meanwhile), and the first request after that; the JSON names the three
slowest pauses with the length of what they suggested (`paused_slowest`: the long tail is long completions).

Then the accepts: at the starts (after the indentation) of the `--accepts` lines after those, the client
waits for a suggestion, types its first characters (up to 3, leaving some of it) as keystrokes, then
presses Tab: it inserts the rest and runs the item's accept command. Reported: those keystrokes' latency,
the denoising runs during them (none is the point) and the feedback log's accepted/rejected counts (the
server runs with a temporary `XDG_STATE_HOME`). `--threads` sets the server's torch threads. Ends with
JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.workload import package_versions, source_files

TYPED_THROUGH_CHARS = 3


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def _end(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)


def _offset(text: str, position: types.Position) -> int:
    """Offset of an LSP position in `text` (UTF-16 characters, as the client negotiated)."""
    lines = text.split("\n")
    before = sum(len(line) + 1 for line in lines[: position.line])
    units = lines[position.line].encode("utf-16-le")[: position.character * 2]
    return before + len(units.decode("utf-16-le"))


def _item_id(item: types.InlineCompletionItem) -> str | None:
    arguments = item.command.arguments if item.command else None
    return arguments[0].get("itemId") if arguments and isinstance(arguments[0], dict) else None


@dataclass
class Ghost:
    """What an editor shows: the text still ahead of the cursor, and the item it came from."""

    rest: str
    item: types.InlineCompletionItem


@dataclass
class Typist:
    """A client that edits one document as an editor would and keeps the ghost text it would show."""

    client: LanguageClient
    uri: str
    text: str = ""
    version: int = 1
    runs: int = 0
    ghost: Ghost | None = None
    typed_through: list[tuple[float, bool]] = field(default_factory=list)
    """(ms, the server answered with the same item) per typed-through keystroke."""

    def set_text(self, text: str) -> None:
        self.version += 1
        self.text, self.ghost = text, None
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))

    def insert(self, chars: str) -> bool:
        """Types `chars` at the end of the document; True when they are what the ghost text showed next."""
        position = _end(self.text)
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            [types.TextDocumentContentChangePartial(range=types.Range(start=position, end=position), text=chars)]))
        self.text += chars
        ghost = self.ghost
        through = ghost is not None and ghost.rest.startswith(chars) and bool(ghost.rest[len(chars):].strip())
        if through:
            assert self.ghost is not None
            self.ghost = Ghost(self.ghost.rest[len(chars):], self.ghost.item)
        else:
            self.ghost = None
        return through

    async def ask(self, through: bool = False) -> tuple[float, bool]:
        """An automatic request at the end of the document: (ms, answered with an item). The ghost text
        follows the answer when the document has not changed meanwhile."""
        version, text, shown = self.version, self.text, self.ghost
        sent = time.perf_counter()
        result = await self.client.text_document_inline_completion_async(types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri), position=_end(text),
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic)))
        ms = (time.perf_counter() - sent) * 1000
        items = result.items if isinstance(result, types.InlineCompletionList) else (result or [])
        if through:
            same = bool(items) and shown is not None and _item_id(items[0]) == _item_id(shown.item)
            self.typed_through.append((ms, same))
        if version == self.version:
            self.ghost = self._ghost(items[0]) if items else None
        return ms, bool(items)

    def _ghost(self, item: types.InlineCompletionItem) -> Ghost | None:
        insert = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
        start = _offset(self.text, item.range.start) if item.range else len(self.text)
        typed = self.text[start:]
        return Ghost(insert[len(typed):], item) if insert.startswith(typed) else None

    async def tab(self) -> None:
        """Accepts the ghost text: inserts the rest and runs the item's command, as an editor does."""
        assert self.ghost is not None and self.ghost.item.command is not None
        command = self.ghost.item.command
        self.insert(self.ghost.rest)
        await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command.command, arguments=command.arguments))


async def session(args: argparse.Namespace) -> dict[str, object]:
    path = sorted(source_files(), key=lambda p: p.stat().st_size)[len(source_files()) // 2]
    text = path.read_text()
    start = len(text) // 3
    typed = text[start : start + args.keystrokes]
    client = LanguageClient("dcomplete-bench", "1")
    typist = Typist(client, path.as_uri())
    uri = typist.uri
    top = path.parent
    while (top / "__init__.py").is_file():  # the workspace holds the file's top-level package
        top = top.parent

    # No `object` annotation here: pygls structures a notification's params by the handler's type
    # hints, and with `object` it drops the notification without a word.
    loaded = asyncio.Event()

    @client.feature("dcomplete/status")
    def _status(params: Any) -> None:
        typist.runs = max(typist.runs, int(getattr(params, "inferences", 0)))
        loaded.set()  # the first status says the model has loaded

    state = tempfile.TemporaryDirectory(prefix="dcomplete-bench-")
    env = dict(os.environ, XDG_STATE_HOME=state.name)
    if args.threads:
        env["OMP_NUM_THREADS"] = str(args.threads)
    started = time.perf_counter()
    await client.start_io(sys.executable, "-m", "lsp_server", env=env)
    options: dict[str, object] = {"model": args.model, "context": args.context == "on"}
    if args.debounce_ms is not None:
        options["debounceMs"] = args.debounce_ms
    if args.automatic_until is not None:
        options["automaticUntil"] = args.automatic_until
    if args.automatic_ms is not None:
        options["automaticMs"] = args.automatic_ms
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16])),
        workspace_folders=[types.WorkspaceFolder(uri=top.as_uri(), name=top.name)],
        initialization_options={"dcomplete": options}))
    client.initialized(types.InitializedParams())
    while not loaded.is_set():  # the server loads the model when it starts
        await asyncio.sleep(0.05)
    load_ms = (time.perf_counter() - started) * 1000
    typist.text = text[:start]
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=typist.text)))
    opened = time.perf_counter()
    while (await client.protocol.send_request_async("dcomplete/documentState", {"uri": uri})).warmed is None:
        await asyncio.sleep(0.05)  # the user reads the file while the server prefills it
    read_ms = (time.perf_counter() - opened) * 1000
    sent = time.perf_counter()
    await client.text_document_inline_completion_async(types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=_end(typist.text),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked)))
    first_ms = (time.perf_counter() - sent) * 1000
    runs_before = typist.runs
    rng = random.Random(0)
    timings: list[tuple[float, bool]] = []

    async def request(through: bool) -> None:
        timings.append(await typist.ask(through))

    pending = []
    for char in typed:
        pending.append(asyncio.ensure_future(request(typist.insert(char))))
        await asyncio.sleep(args.gap_ms / 1000 * rng.uniform(0.6, 1.4))
    await asyncio.gather(*pending)
    typing_runs = typist.runs - runs_before
    typing_through = list(typist.typed_through)
    lines = [i for i, char in enumerate(text) if char == "\n" and i > start + len(typed)]
    pauses = [await pause(typist, text[:end] + "\n") for end in lines[: args.pauses]]
    typist.typed_through.clear()
    accepts = [await accept(typist, text, end, rng, args.gap_ms) for end in lines[args.pauses :][: args.accepts]]
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    feedback = _feedback_counts(Path(state.name) / "dcomplete" / "feedback.jsonl")
    state.cleanup()
    all_ms = [t for t, _ in timings]
    answered = [t for t, has in timings if has]
    return {"file": str(path), "requests": len(timings), "inferences": typing_runs, "answered": len(answered),
            "all_ms": all_ms, "answered_ms": answered, "first_ms": first_ms, "pauses": pauses,
            "typing_through": typing_through, "accepts": accepts, "accept_through": typist.typed_through,
            "feedback": feedback, "load_ms": load_ms, "read_ms": read_ms}


async def pause(typist: Typist, current: str) -> tuple[float, bool, int]:
    """(ms, answered, characters suggested) for one request at the end of `current`, waited for: as a user
    who writes a line, pauses for a suggestion, and goes on."""
    typist.set_text(current)
    ms, answered = await typist.ask()
    return ms, answered, len(typist.ghost.rest) if typist.ghost is not None else 0


@dataclass(frozen=True)
class Accepted:
    suggested: bool
    typed: int
    runs_while_typing: int


async def accept(typist: Typist, text: str, end: int, rng: random.Random, gap_ms: float) -> Accepted:
    """At the start of the line after `end` (its indentation typed): wait for a suggestion, type up to
    `TYPED_THROUGH_CHARS` of its first characters, then Tab."""
    line = text[end + 1 :].split("\n", 1)[0]
    typist.set_text(text[: end + 1] + line[: len(line) - len(line.lstrip())])
    await typist.ask()
    if typist.ghost is None:
        return Accepted(False, 0, 0)
    rest = typist.ghost.rest
    count = max((k for k in range(TYPED_THROUGH_CHARS + 1) if rest[k:].strip()), default=0)
    runs = typist.runs
    for char in rest[:count]:
        await asyncio.sleep(gap_ms / 1000 * rng.uniform(0.6, 1.4))
        await typist.ask(typist.insert(char))
    runs_while_typing = typist.runs - runs
    if typist.ghost is not None:
        await typist.tab()
    return Accepted(True, count, runs_while_typing)


def _feedback_counts(log: Path) -> dict[str, int]:
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return {kind: sum(1 for e in events if e.get("event") == kind) for kind in ("accepted", "rejected")}


def _row(label: str, values: list[float]) -> None:
    if values:
        print(f"{label:>28} {len(values):>4} {percentile(values, 50):>7.1f} {percentile(values, 95):>7.1f} "
              f"{percentile(values, 99):>7.1f}")


def _stats(values: list[float], prefix: str) -> dict[str, float | None]:
    return {f"{prefix}_p50_ms": round(percentile(values, 50), 1) if values else None,
            f"{prefix}_p95_ms": round(percentile(values, 95), 1) if values else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lsp_latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--keystrokes", type=int, default=240)
    parser.add_argument("--gap-ms", type=float, default=120.0)
    parser.add_argument("--debounce-ms", type=int, default=None, help="server setting (default: the server's)")
    parser.add_argument("--automatic-until", choices=("statement", "block"), default=None,
                        help="server setting automaticUntil (default: the server's)")
    parser.add_argument("--automatic-ms", type=int, default=None,
                        help="server setting automaticMs (default: the server's)")
    parser.add_argument("--pauses", type=int, default=40, help="line ends to complete at, each waited for")
    parser.add_argument("--accepts", type=int, default=20,
                        help="suggestions accepted after typing their first characters")
    parser.add_argument("--threads", type=int, default=None, help="the server's torch threads (OMP_NUM_THREADS)")
    parser.add_argument("--context", choices=("on", "off"), default="on",
                        help="the server's repository context (the file's package is the workspace folder)")
    args = parser.parse_args(argv)
    r = asyncio.run(session(args))
    all_ms, answered = r["all_ms"], r["answered_ms"]
    pauses, accepts = r["pauses"], r["accepts"]
    typing_through, accept_through = r["typing_through"], r["accept_through"]
    assert isinstance(all_ms, list) and isinstance(answered, list) and isinstance(pauses, list)
    assert isinstance(accepts, list) and isinstance(typing_through, list) and isinstance(accept_through, list)
    through_ms = [t for t, _ in typing_through + accept_through]
    reused = sum(1 for _, same in typing_through + accept_through if same)
    paused_ms = [t for t, _, _ in pauses]
    paused_answered = [t for t, has, _ in pauses if has]
    suggested = [a for a in accepts if a.suggested]
    accept_runs = sum(a.runs_while_typing for a in suggested)
    print(f"{r['requests']} keystrokes, {args.gap_ms:.0f} ms apart (±40%); model {args.model}")
    print(f"{'':>28} {'n':>4} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7}")
    _row("all requests", all_ms)
    _row("with a completion", answered)
    _row("typing: typed through", [t for t, _ in typing_through])
    ratio = r["inferences"] / r["requests"]
    print(f"denoising runs per request received: {ratio:.3f}")
    print(f"model load (server start to loaded): {r['load_ms']:.0f} ms; document prefilled "
          f"{r['read_ms']:.0f} ms after it was opened; first request after that: {r['first_ms']:.0f} ms")
    _row("paused, all", paused_ms)
    _row("paused, answered", paused_answered)
    _row("accepts: typed through", [t for t, _ in accept_through])
    _row("typed through, all", through_ms)
    print(f"typed-through keystrokes answered with the same item: {reused} of {len(through_ms)}; "
          f"denoising runs while typing through before Tab: {accept_runs}; "
          f"suggested at {len(suggested)} of {len(accepts)} accept points; feedback log: {r['feedback']}")
    print(json.dumps({
        "benchmark": "lsp_latency", "model": args.model, "context": args.context, "file": r["file"],
        "keystrokes": r["requests"], "gap_ms": args.gap_ms,
        "p50_ms": round(percentile(all_ms, 50), 1), "p95_ms": round(percentile(all_ms, 95), 1),
        "p99_ms": round(percentile(all_ms, 99), 1),
        "answered_p50_ms": round(percentile(answered, 50), 1) if answered else None,
        "answered_p95_ms": round(percentile(answered, 95), 1) if answered else None,
        "inferences_per_request": round(ratio, 4), "sources": package_versions(),
        "first_request_ms": round(float(r["first_ms"]), 1), "threads": args.threads,
        "load_ms": round(float(r["load_ms"]), 1), "open_to_prefilled_ms": round(float(r["read_ms"]), 1),
        "paused_p50_ms": round(percentile(paused_ms, 50), 1) if paused_ms else None,
        "paused_p95_ms": round(percentile(paused_ms, 95), 1) if paused_ms else None,
        "paused_answered": len(paused_answered), "pauses": len(paused_ms),
        "paused_slowest": [{"ms": round(t), "chars": chars} for t, _, chars in sorted(pauses)[-3:]],
        "paused_chars": sum(chars for _, _, chars in pauses),
        "automatic_until": args.automatic_until, "automatic_ms": args.automatic_ms,
        "mean_all_ms": round(statistics.mean(all_ms), 1),
        "typed_through": len(through_ms), "typed_through_in_typing": len(typing_through),
        **_stats(through_ms, "typed_through"), "typed_through_same_item": reused,
        "accepts": len(accepts), "accepts_suggested": len(suggested),
        "accept_typed_chars": sum(a.typed for a in suggested), "accept_runs_while_typing": accept_runs,
        "feedback": r["feedback"],
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
