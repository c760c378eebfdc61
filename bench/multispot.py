"""Multi-spot: k spots of one file denoised in one canvas, against k separate requests.

    python -m bench.multispot [--model default] [--device cpu] [--files 4]

For k in 1, 2, 4, 8: k line-sized spots spread over one real file (bench.workload sources), fast mode.
"one run" fills all k in one canvas (one denoising loop); "separate" fills them one request each.
The speed-up is separate time / one-run time, measured side by side; "agree" is the fraction of spot
tokens on which the two ways chose the same token. The two ways see different canvases (in one run the
other spots are masks too; a separate request sees their original text), so agreement below 1 is the
model reacting to that, not an approximation of the loop. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import time

from bench.workload import _body_line_starts, package_versions, source_files
from engine import DenoiseParams, Engine, InfillRequest
from infill.canvas import canvas_for, encode
from infill.spots import Spot

KS = (1, 2, 4, 8)


def spots_in(text: str, tokenizer, k: int, budget: int) -> list[Spot]:
    """k single-line spots spread evenly over a region of the file that fits the context."""
    starts = _body_line_starts(text)
    first = len(starts) // 4
    region, used = [], 0
    for a, b in zip(starts[first:], starts[first + 1 :] + [len(text)]):
        if used >= budget * 0.6:
            break
        region.append(a)
        used += len(encode(tokenizer, text[a:b]))
    spots: list[Spot] = []
    for i in range(k):
        start = region[int(i * len(region) / k)]
        end = text.find("\n", start) + 1 or len(text)
        if spots and start <= spots[-1].end:
            return []  # too few lines here to keep k spots apart
        spots.append(Spot(start, end, len(encode(tokenizer, text[start:end])), "line"))
    return spots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.multispot", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--context", type=int, default=1024,
                        help="canvas budget (default 1024: eight spots apart need more than the bundled 256; speed only)")
    parser.add_argument("--near", type=int, default=DenoiseParams.near,
                        help="fast mode: fixed text this close to a span reruns every step")
    parser.add_argument("--spots", default=",".join(map(str, KS)), help="spot counts to measure (default 1,2,4,8)")
    args = parser.parse_args(argv)
    engine = Engine.load(args.model, device=args.device)
    params = DenoiseParams.fast().with_(near=args.near)
    budget = args.context
    texts = [p.read_text(encoding="utf-8") for p in source_files()]
    ks = [int(k) for k in args.spots.split(",")]
    texts = [t for t in texts if len(spots_in(t, engine.tokenizer, max(ks), budget)) == max(ks)][: args.files]
    if not texts:
        parser.error(f"no source file holds {max(ks)} spots apart within {budget} tokens; raise --context")
    rows = {}
    for k in ks:
        one = separate = 0.0
        forwards_one = forwards_sep = same = total = 0
        for text in texts:
            spots = spots_in(text, engine.tokenizer, k, budget)
            joint = list(canvas_for(engine, text, spots, budget).ids)
            alone = [list(canvas_for(engine, text, [s], budget).ids) for s in spots]
            engine.infill([InfillRequest(joint)], params)  # warm-up
            started = time.perf_counter()
            r = engine.infill([InfillRequest(joint)], params)[0]
            one += time.perf_counter() - started
            forwards_one += r.stats.forward_passes
            started = time.perf_counter()
            singles = [engine.infill([InfillRequest(ids)], params)[0] for ids in alone]
            separate += time.perf_counter() - started
            forwards_sep += sum(s.stats.forward_passes for s in singles)
            for joint_span, single in zip(r.spans, singles):
                same += sum(a == b for a, b in zip(joint_span.token_ids, single.spans[0].token_ids))
                total += max(len(joint_span.token_ids), len(single.spans[0].token_ids))
        rows[k] = {"one_run_s": one, "separate_s": separate, "speedup": separate / one,
                   "forwards_one_run": forwards_one / len(texts), "forwards_separate": forwards_sep / len(texts),
                   "agreement": same / total}
    print(f"model {engine.name} on {engine.device}; {len(texts)} files; fast mode; context {budget}")
    print(f"{'spots':>5} {'one run s':>9} {'separate s':>10} {'speed-up':>8} {'fwd one':>8} {'fwd sep':>8} {'agree':>6}")
    for k, r in rows.items():
        print(f"{k:>5} {r['one_run_s']:>9.3f} {r['separate_s']:>10.3f} {r['speedup']:>8.2f} "
              f"{r['forwards_one_run']:>8.1f} {r['forwards_separate']:>8.1f} {r['agreement']:>6.3f}")
    print(json.dumps({"benchmark": "multispot", "model": engine.name, "device": engine.device,
                      f"multispot_speedup_{max(ks)}": round(rows[max(ks)]["speedup"], 3),
                      "sources": package_versions(),
                      "rows": {str(k): {m: round(v, 4) for m, v in r.items()} for k, r in rows.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
