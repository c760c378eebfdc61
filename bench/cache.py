"""Document cache: a request on a long file right after an edit, with the document's cached keys/values
(warm) against without (cold).

    python -m bench.cache [--model default] [--device cpu] [--tokens 4096] [--repeats 4] [--edit far|near]

`--edit far` changes a line near the top of the file (the cursor's text is unchanged but shifted): a
full-attention family reuses the cached text above the edit as it is and the text below it re-rotated
(engine/cache/doc_cache.py); the anchored family's causal prefix can keep only the text above the edit.
`--edit near` (typing) adds a word at the end of the line before the cursor: every family keeps the
text above it, the anchored family exactly. The canvas holds the whole file, so the context is set to
--tokens (this measures speed; a model trained on a shorter context is not asked for quality here).
Agreement is warm vs cold tokens. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import time

from bench.workload import _body_line_starts, package_versions, source_files
from engine import DenoiseParams, Engine, InfillRequest
from infill.canvas import canvas_for, encode
from infill.spots import Spot


def long_text(tokenizer, tokens: int) -> str:
    """The first whole lines of the longest source file, about `tokens` tokens."""
    text = max((p.read_text(encoding="utf-8") for p in source_files()), key=len)
    lines, count = [], 0
    for line in text.splitlines(keepends=True):
        count += len(encode(tokenizer, line))
        if count > tokens:
            break
        lines.append(line)
    return "".join(lines)


def edited(text: str, n: int, cursor: int, near: bool) -> str:
    """The text with a code line changed: its n-th in the first tenth of the file, or (near) the line
    just before `cursor`."""
    if near:
        end = text.rindex("\n", 0, cursor)
        return text[:end] + f"  # edit {n}" + text[end:]
    starts = [s for s in _body_line_starts(text) if s < len(text) // 10] or [0]
    at = starts[n % len(starts)]
    end = text.index("\n", at)
    return text[:end] + f"  # edit {n}" + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cache", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--edit", choices=("far", "near"), default="far")
    args = parser.parse_args(argv)
    engine = Engine.load(args.model, device=args.device)
    tok = engine.tokenizer
    params = DenoiseParams.fast()
    text = long_text(tok, args.tokens - 64)
    body = _body_line_starts(text)
    cursor = body[-min(3, len(body))] if body else text.rindex("\n", 0, len(text) - 1) + 1
    budget = args.tokens

    def canvas(t: str) -> list[int]:
        at = t.index(text[cursor:])  # the cursor's line, wherever the edit moved it
        spot = Spot(at, at, 16, "line")
        return list(canvas_for(engine, t, [spot], budget).ids)

    base = canvas(text)
    engine.infill([InfillRequest(base, doc_id="warm-up")], params)
    cold_s = warm_s = 0.0
    agree = total = fwd_cold = fwd_warm = 0
    for n in range(args.repeats):
        after = canvas(edited(text, n, cursor, args.edit == "near"))
        started = time.perf_counter()
        cold = engine.infill([InfillRequest(after)], params)[0]
        cold_s += time.perf_counter() - started
        engine.infill([InfillRequest(base, doc_id="doc")], params)  # the keystroke before the edit
        started = time.perf_counter()
        warm = engine.infill([InfillRequest(after, doc_id="doc")], params)[0]
        warm_s += time.perf_counter() - started
        engine.forget("doc")
        a, b = cold.spans[0].token_ids, warm.spans[0].token_ids
        agree += sum(x == y for x, y in zip(a, b))
        total += len(a)
        fwd_cold += cold.stats.forward_passes
        fwd_warm += warm.stats.forward_passes
    print(f"model {engine.name} on {engine.device}; canvas {len(base)} tokens; {args.repeats} {args.edit} edits; fast mode")
    print(f"{'':>5} {'seconds/request':>15} {'forwards':>8}")
    print(f"{'cold':>5} {cold_s / args.repeats:>15.4f} {fwd_cold / args.repeats:>8.1f}")
    print(f"{'warm':>5} {warm_s / args.repeats:>15.4f} {fwd_warm / args.repeats:>8.1f}")
    print(f"warm speed-up {cold_s / warm_s:.2f}x, warm/cold agreement {agree / total:.3f}")
    print(json.dumps({"benchmark": "cache", "model": engine.name, "device": engine.device, "edit": args.edit,
                      "canvas_tokens": len(base), "warm_speedup": round(cold_s / warm_s, 3),
                      "agreement": round(agree / total, 4), "cold_s": round(cold_s / args.repeats, 5),
                      "warm_s": round(warm_s / args.repeats, 5), "sources": package_versions()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
