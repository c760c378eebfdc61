"""LSP latency: the real server over stdio, a scripted typing session at human pace on a real file.

    python -m bench.lsp_latency [--model default] [--keystrokes 240] [--gap-ms 120] [--debounce-ms N]
                                [--pauses 40] [--threads 2]

A pygls client starts `python -m lsp_server`, opens the first part of a real Python file (bench.workload
sources) and types the next characters one keystroke at a time, `--gap-ms` apart (with a little jitter),
sending didChange and then an automatic inlineCompletion request for every keystroke, as an editor does.
Latency is request to response for every request; a request superseded by the next keystroke answers
empty at once, so the table splits answers that carried a completion from those that did not. Denoising
runs are read from the `inferences` counter of the server's `dcomplete/status` notification (a request
mid-word runs none; a superseded run counts).

Then the pauses: at the ends of the `--pauses` lines that follow (where a user stops typing and waits), the
client sets the document to the text before that point and asks once, waiting for the answer:
the latency of a line completion as the user sees it, warm. Reported apart: the model's load (the server
loads it when it starts; the session waits for it), how long after the file was opened the server had
prefilled it (the user reads it meanwhile), and the first request after that. `--threads` sets the server's torch threads. Ends with
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
import time
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.workload import package_versions, source_files

URI = "file:///bench/typing.py"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


async def session(args: argparse.Namespace) -> dict[str, object]:
    text = sorted(source_files(), key=lambda p: p.stat().st_size)[len(source_files()) // 2].read_text()
    start = len(text) // 3
    typed = text[start : start + args.keystrokes]
    client = LanguageClient("dcomplete-bench", "1")
    runs = {"latest": 0}

    # No `object` annotation here: pygls structures a notification's params by the handler's type
    # hints, and with `object` it drops the notification without a word.
    loaded = asyncio.Event()

    @client.feature("dcomplete/status")
    def _status(params: Any) -> None:
        runs["latest"] = max(runs["latest"], int(getattr(params, "inferences", 0)))
        loaded.set()  # the first status says the model has loaded

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads)) if args.threads else None
    started = time.perf_counter()
    await client.start_io(sys.executable, "-m", "lsp_server", env=env)
    options: dict[str, object] = {"model": args.model}
    if args.debounce_ms is not None:
        options["debounceMs"] = args.debounce_ms
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16])),
        initialization_options={"dcomplete": options}))
    client.initialized(types.InitializedParams())
    while not loaded.is_set():  # the server loads the model when it starts
        await asyncio.sleep(0.05)
    load_ms = (time.perf_counter() - started) * 1000
    current = text[:start]
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=URI, language_id="python", version=1, text=current)))
    opened = time.perf_counter()
    while (await client.protocol.send_request_async("dcomplete/documentState", {"uri": URI})).warmed is None:
        await asyncio.sleep(0.05)  # the user reads the file while the server prefills it
    read_ms = (time.perf_counter() - opened) * 1000
    doc = types.TextDocumentIdentifier(uri=URI)
    sent = time.perf_counter()
    await client.text_document_inline_completion_async(types.InlineCompletionParams(
        text_document=doc, position=_end(current),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked)))
    first_ms = (time.perf_counter() - sent) * 1000
    runs_before = runs["latest"]
    rng = random.Random(0)
    timings: list[tuple[float, bool]] = []
    pending: list[asyncio.Task[None]] = []

    async def request(position: types.Position) -> None:
        sent = time.perf_counter()
        result = await client.text_document_inline_completion_async(types.InlineCompletionParams(
            text_document=doc, position=position,
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic)))
        items = result.items if isinstance(result, types.InlineCompletionList) else (result or [])
        timings.append(((time.perf_counter() - sent) * 1000, bool(items)))

    for version, char in enumerate(typed, start=2):
        position = _end(current)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            [types.TextDocumentContentChangePartial(range=types.Range(start=position, end=position), text=char)]))
        current += char
        pending.append(asyncio.ensure_future(request(_end(current))))
        await asyncio.sleep(args.gap_ms / 1000 * rng.uniform(0.6, 1.4))
    await asyncio.gather(*pending)
    pauses = await pause_points(client, doc, text, start + len(typed), args.pauses)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    all_ms = [t for t, _ in timings]
    answered = [t for t, has in timings if has]
    return {"requests": len(timings), "inferences": runs["latest"] - runs_before, "answered": len(answered),
            "all_ms": all_ms, "answered_ms": answered, "first_ms": first_ms, "pauses": pauses, "load_ms": load_ms,
            "read_ms": read_ms}


async def pause_points(client: LanguageClient, doc: types.TextDocumentIdentifier, text: str, start: int,
                       count: int) -> list[tuple[float, bool]]:
    """(ms, answered) for a request at the end of each of `count` consecutive lines after `start`, each
    waited for: the document is set to the text up to that point first (one more line each time, as a
    user who writes a line, pauses for a suggestion, and goes on)."""
    chosen = [i for i, char in enumerate(text) if char == "\n" and i > start][:count]
    out = []
    version = 10_000
    for end in chosen:
        current = text[:end]
        version += 1
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=doc.uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=current + "\n")]))
        sent = time.perf_counter()
        result = await client.text_document_inline_completion_async(types.InlineCompletionParams(
            text_document=doc, position=types.Position(line=current.count("\n") + 1, character=0),
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic)))
        items = result.items if isinstance(result, types.InlineCompletionList) else (result or [])
        out.append(((time.perf_counter() - sent) * 1000, bool(items)))
    return out


def _end(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lsp_latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--keystrokes", type=int, default=240)
    parser.add_argument("--gap-ms", type=float, default=120.0)
    parser.add_argument("--debounce-ms", type=int, default=None, help="server setting (default: the server's)")
    parser.add_argument("--pauses", type=int, default=40, help="line ends to complete at, each waited for")
    parser.add_argument("--threads", type=int, default=None, help="the server's torch threads (OMP_NUM_THREADS)")
    args = parser.parse_args(argv)
    r = asyncio.run(session(args))
    all_ms, answered = r["all_ms"], r["answered_ms"]
    assert isinstance(all_ms, list) and isinstance(answered, list)
    print(f"{r['requests']} keystrokes, {args.gap_ms:.0f} ms apart (±40%); model {args.model}")
    print(f"{'':>22} {'n':>4} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7}")
    for label, values in (("all requests", all_ms), ("with a completion", answered)):
        if values:
            print(f"{label:>22} {len(values):>4} {percentile(values, 50):>7.1f} {percentile(values, 95):>7.1f} "
                  f"{percentile(values, 99):>7.1f}")
    ratio = r["inferences"] / r["requests"]
    print(f"denoising runs per request received: {ratio:.3f}")
    pauses = r["pauses"]
    assert isinstance(pauses, list)
    paused_ms = [t for t, _ in pauses]
    paused_answered = [t for t, has in pauses if has]
    print(f"model load (server start to loaded): {r['load_ms']:.0f} ms; document prefilled "
          f"{r['read_ms']:.0f} ms after it was opened; first request after that: {r['first_ms']:.0f} ms")
    for label, values in (("paused, all", paused_ms), ("paused, answered", paused_answered)):
        if values:
            print(f"{label:>22} {len(values):>4} {percentile(values, 50):>7.1f} {percentile(values, 95):>7.1f} "
                  f"{percentile(values, 99):>7.1f}")
    print(json.dumps({
        "benchmark": "lsp_latency", "model": args.model, "keystrokes": r["requests"], "gap_ms": args.gap_ms,
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
        "mean_all_ms": round(statistics.mean(all_ms), 1),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
