"""Prefix cache: a request on a ~4k-token file right after a one-line edit far above the cursor,
with the document's cached keys/values (warm) against without (cold).

    python -m bench.cache [--model default] [--device cpu] [--tokens 4096] [--repeats 4]

The edit changes a line near the top of the file (so the cursor's text is unchanged but shifted);
the warm request reuses the cached text above the edit as it is and the text below it re-rotated
(engine/prefix_cache.py), running only the edited line and the mask span on its first step. The canvas
holds the whole file, so the context is set to --tokens (this measures speed; a model trained on a
shorter context is not asked for quality here). Agreement is warm vs cold tokens. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import time

from bench.workload import _body_line_starts, package_versions, source_files
from engine import DenoiseParams, Engine, InfillRequest
from infill.canvas import build_canvas, encode
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


def edited(text: str, n: int) -> str:
    """The text with its n-th code line (in the first tenth of the file) changed."""
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
    args = parser.parse_args(argv)
    engine = Engine.load(args.model, device=args.device)
    tok, sp = engine.tokenizer, engine.special
    params = DenoiseParams.fast()
    text = long_text(tok, args.tokens - 64)
    body = _body_line_starts(text)
    cursor = body[-min(3, len(body))] if body else text.rindex("\n", 0, len(text) - 1) + 1
    budget = args.tokens

    def canvas(t: str) -> list[int]:
        at = t.index(text[cursor:])  # the cursor's line, wherever the edit moved it
        spot = Spot(at, at, 16, "line")
        return list(build_canvas(t, [spot], tok, sp, budget).ids)

    base = canvas(text)
    engine.infill([InfillRequest(base, doc_id="warm-up")], params)
    cold_s = warm_s = 0.0
    agree = total = fwd_cold = fwd_warm = 0
    for n in range(args.repeats):
        after = canvas(edited(text, n))
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
    print(f"model {engine.name} on {engine.device}; canvas {len(base)} tokens; {args.repeats} edits; fast mode")
    print(f"{'':>5} {'seconds/request':>15} {'forwards':>8}")
    print(f"{'cold':>5} {cold_s / args.repeats:>15.4f} {fwd_cold / args.repeats:>8.1f}")
    print(f"{'warm':>5} {warm_s / args.repeats:>15.4f} {fwd_warm / args.repeats:>8.1f}")
    print(f"warm speed-up {cold_s / warm_s:.2f}x, warm/cold agreement {agree / total:.3f}")
    print(json.dumps({"benchmark": "cache", "model": engine.name, "device": engine.device,
                      "canvas_tokens": len(base), "warm_speedup": round(cold_s / warm_s, 3),
                      "agreement": round(agree / total, 4), "cold_s": round(cold_s / args.repeats, 5),
                      "warm_s": round(warm_s / args.repeats, 5), "sources": package_versions()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
