"""LSP latency: the real server over stdio, a scripted typing session at human pace on a real file.

    python -m bench.lsp_latency [--model default] [--keystrokes 240] [--gap-ms 120] [--debounce-ms N]

A pygls client starts `python -m lsp_server`, opens the first part of a real Python file (bench.workload
sources) and types the next characters one keystroke at a time, `--gap-ms` apart (with a little jitter),
sending didChange and then an automatic inlineCompletion request for every keystroke, as an editor does.
Latency is request to response for every request; a request superseded by the next keystroke answers
empty at once, so the table splits answers that carried a completion from those that did not. Denoising
runs are read from the `inferences` counter of the server's `dcomplete/status` notification (a request
mid-word runs none; a superseded run counts). Ends with JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
    @client.feature("dcomplete/status")
    def _status(params: Any) -> None:
        runs["latest"] = max(runs["latest"], int(getattr(params, "inferences", 0)))

    await client.start_io(sys.executable, "-m", "lsp_server")
    options: dict[str, object] = {"model": args.model}
    if args.debounce_ms is not None:
        options["debounceMs"] = args.debounce_ms
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16])),
        initialization_options={"dcomplete": options}))
    client.initialized(types.InitializedParams())
    current = text[:start]
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=URI, language_id="python", version=1, text=current)))
    doc = types.TextDocumentIdentifier(uri=URI)
    warm = await client.text_document_inline_completion_async(types.InlineCompletionParams(
        text_document=doc, position=_end(current),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked)))
    del warm  # loads the model; not timed
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
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    all_ms = [t for t, _ in timings]
    answered = [t for t, has in timings if has]
    return {"requests": len(timings), "inferences": runs["latest"] - runs_before, "answered": len(answered),
            "all_ms": all_ms,
            "answered_ms": answered}


def _end(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lsp_latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--keystrokes", type=int, default=240)
    parser.add_argument("--gap-ms", type=float, default=120.0)
    parser.add_argument("--debounce-ms", type=int, default=None, help="server setting (default: the server's)")
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
    print(json.dumps({
        "benchmark": "lsp_latency", "model": args.model, "keystrokes": r["requests"], "gap_ms": args.gap_ms,
        "p50_ms": round(percentile(all_ms, 50), 1), "p95_ms": round(percentile(all_ms, 95), 1),
        "p99_ms": round(percentile(all_ms, 99), 1),
        "answered_p50_ms": round(percentile(answered, 50), 1) if answered else None,
        "answered_p95_ms": round(percentile(answered, 95), 1) if answered else None,
        "inferences_per_request": round(ratio, 4), "sources": package_versions(),
        "mean_all_ms": round(statistics.mean(all_ms), 1),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
