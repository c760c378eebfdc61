"""Exact block caching of the block-diffusion families, measured on tiny random checkpoints.

    python -m bench.block_cache [--cases 6] [--span 32] [--threshold 0.9]

For SDAR, Fast-dLLM v2 and LLaDA2.x (tiny random checkpoints in their real layouts, `tests.support.block_checkpoints`:
blocks of 4, 16 and 4), on canvases cut from real Python files (`bench.workload`, oracle length), each
rule runs twice: `cache="none"` recomputes every block up to the current one every step (LLaDA2's
`generate`), `cache="fixed"` computes a complete block once and keeps its keys and values. Per row:
agreement of the two (fraction of span positions with the same token; exactness says 1.000), forwards
and canvas positions run per written token with and without the cache, and tokens per forward. The
reference rule writes one token a step; the threshold rule (`--threshold`) several where the model is
confident (the tiny checkpoints' output layer is scaled up so that it often is). The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench.workload import cases
from engine import DenoiseParams, Engine, InfillRequest
from tests.support.block_checkpoints import make_tiny_block_checkpoint

BLOCKS = {"sdar": 4, "fast_dllm": 16, "llada2": 4}


def run(engine: Engine, canvases: list[list[int]], params: DenoiseParams) -> tuple[list[list[int]], dict[str, int]]:
    spans, totals = [], {"written": 0, "forwards": 0, "positions": 0}
    for canvas in canvases:
        result = engine.infill([InfillRequest(canvas)], params)[0]
        spans.append(result.spans[0].token_ids)
        totals["written"] += result.stats.new_tokens
        totals["forwards"] += result.stats.forward_passes
        totals["positions"] += result.stats.positions
    return spans, totals


def measure(engine: Engine, canvases: list[list[int]], params: DenoiseParams) -> dict[str, float]:
    cold_spans, cold = run(engine, canvases, params.with_(cache="none"))
    warm_spans, warm = run(engine, canvases, params.with_(cache="fixed"))
    same = sum(a == b for x, y in zip(cold_spans, warm_spans) for a, b in zip(x, y))
    total = sum(len(x) for x in cold_spans)
    written = max(1, warm["written"])
    return {
        "agreement": same / max(1, total),
        "written": warm["written"],
        "forwards_per_token_none": cold["forwards"] / max(1, cold["written"]),
        "forwards_per_token_fixed": warm["forwards"] / written,
        "positions_per_token_none": cold["positions"] / max(1, cold["written"]),
        "positions_per_token_fixed": warm["positions"] / written,
        "tokens_per_forward": warm["written"] / max(1, warm["forwards"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.block_cache", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=6)
    parser.add_argument("--span", type=int, default=32, help="tokens per gap (oracle length)")
    parser.add_argument("--threshold", type=float, default=0.9)
    args = parser.parse_args(argv)
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for family, block in BLOCKS.items():
            engine = Engine.load(str(make_tiny_block_checkpoint(Path(tmp) / family, family, block_size=block)),
                                 device="cpu")
            canvases = [case.canvas for case in cases(engine, args.span, args.cases)]
            for rule, params in (("reference", DenoiseParams.reference()),
                                 ("threshold", DenoiseParams.fast(args.threshold))):
                rows[f"{family}/{rule}"] = measure(engine, canvases, params)
    head = (f"{'family / rule':<20} {'agree':>6} {'tokens':>6} {'fwd/tok none':>12} {'fwd/tok cached':>14} "
            f"{'pos/tok none':>12} {'pos/tok cached':>14} {'tok/fwd':>7}")
    print(head)
    for name, r in rows.items():
        print(f"{name:<20} {r['agreement']:>6.3f} {r['written']:>6} {r['forwards_per_token_none']:>12.2f} "
              f"{r['forwards_per_token_fixed']:>14.2f} {r['positions_per_token_none']:>12.1f} "
              f"{r['positions_per_token_fixed']:>14.1f} {r['tokens_per_forward']:>7.2f}")
    print(json.dumps({"benchmark": "block_cache", "cases": args.cases, "span": args.span,
                      "threshold": args.threshold, "blocks": BLOCKS,
                      "rows": {k: {m: round(v, 4) for m, v in r.items()} for k, r in rows.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
