"""One decoding step of the bundled model with its products compiled (inductor's int8 weight-only AMX kernel)
against the engine's own, end to end, before any of it is wired into the engine.

    python -m bench.compiled_step [--context 1024] [--rows 1,16] [--rounds 9] [--threads 2] [--layers 30]

The engine loads as usual; then every fused product of a decoding step (q/k/v, o, gate/up, down with the
adapter's update added into the weight, and the head) is quantized to int8 per output row and compiled by
`bench.compiled_products.compile_direct` for any row count (`--dynamic` there: the AMX micro-kernel at every
row count, which keeps a row's bits whatever rows run beside it). A `Swapped` stand-in takes the product's
place in the model and runs the compiled product for decoding calls of 1-16 rows (every row a gap row and
the adapter on: the calls today's merged bfloat16 copy serves) and the engine's own product otherwise.

Reported, the two taking turns in each round: the step's median ms after `--context` tokens at each row
count (bench.step's step: the last written token and the masks after it), the ratio, and how often the
compiled step's greedy token at a row equals the engine's. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from bench.compiled_products import Int8Linear, Product, compile_direct, configure
from bench.step import OurStep, context_ids
from engine.kernels.projections import MAX_TABLE_ROWS, Adapt, FusedProjections


class Swapped:
    """A fused product whose decoding calls run `compiled` (x (1, rows, K) -> (1, rows, N) float32)."""

    def __init__(self, inner: FusedProjections, compiled: Callable[[torch.Tensor], torch.Tensor]) -> None:
        self.inner, self.compiled = inner, compiled
        self.names, self.sizes, self.width = inner.names, inner.sizes, inner.width

    def _run(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // x.shape[-1]
        y = self.compiled(x.reshape(1, rows, x.shape[-1])).view(*x.shape[:-1], -1)
        return y if self.inner.bias is None else y + self.inner.bias

    def __call__(self, x: torch.Tensor, adapt: Adapt | None, layer: int) -> tuple[torch.Tensor, ...]:
        rows = x.numel() // x.shape[-1]
        if (adapt is not None and adapt.every_row and adapt.rows.numel() > 0 and self.inner.up is not None
                and rows <= MAX_TABLE_ROWS):
            return torch.split(self._run(x), self.sizes, -1)
        return self.inner(x, adapt, layer)

    def product(self, x: torch.Tensor, width: int, mixed: bool = False, decoding: bool = False) -> torch.Tensor:
        rows = x.numel() // x.shape[-1]
        if self.inner.up is None and not mixed and rows <= MAX_TABLE_ROWS and width == self.width:
            return self._run(x)
        return self.inner.product(x, width, mixed, decoding)


def decoding_weight(p: FusedProjections) -> torch.Tensor:
    """The weight a decoding step multiplies by: the base with the adapter's update added in."""
    if p.up is None:
        return p.weight.detach().float()
    return torch.addmm(p.weight, p.up, p._full[p.width :], alpha=p.scale).float()


def swaps(model: Any, layers: int) -> tuple[list[tuple[Any, str, Any, Swapped]], float]:
    """(owner, attribute, engine's product, stand-in) for every product, and the compile seconds."""
    places: list[tuple[Any, str]] = []
    for block in model.model.layers[:layers]:
        places += [(block.self_attn, "qkv"), (block.self_attn, "out"), (block.mlp, "gate_up"), (block.mlp, "down")]
    places.append((model, "head"))
    found, started = [], time.perf_counter()
    for owner, attr in places:
        inner = getattr(owner, attr)
        product = Product(attr, decoding_weight(inner).contiguous())
        product.quantize(32, int4=False)
        x = torch.randn(1, 2, inner.weight.shape[1])
        with torch.inference_mode():
            compiled = compile_direct(Int8Linear(*product.int8).eval(), x, dynamic=True)
        found.append((owner, attr, inner, Swapped(inner, compiled)))
    return found, time.perf_counter() - started


def use(swapped: list[tuple[Any, str, Any, Swapped]], compiled: bool) -> None:
    for owner, attr, inner, stand_in in swapped:
        setattr(owner, attr, stand_in if compiled else inner)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compiled_step", description=__doc__.split("\n\n")[0])
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--rows", default="1,16")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=30, help="blocks whose products are compiled")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    configure("CPP", Path(os.environ.get("TORCHINDUCTOR_CACHE_DIR") or tempfile.mkdtemp(prefix="inductor-")))

    from engine import Engine

    engine = Engine.load("default", device="cpu")
    model = engine.loaded.model
    swapped, compile_s = swaps(model, args.layers)
    prefix, written, suffix = context_ids(engine, args.context)
    step = OurStep(engine, prefix, written, suffix, adapter=True)
    results: dict[str, dict[str, float]] = {}
    for rows in (int(r) for r in args.rows.split(",")):
        times: dict[bool, list[float]] = {False: [], True: []}
        tokens: dict[bool, torch.Tensor] = {}
        for compiled in (False, True):
            use(swapped, compiled)
            tokens[compiled] = step.predict(rows).argmax(-1)
        for _ in range(args.rounds):
            for compiled in (False, True):
                use(swapped, compiled)
                started = time.perf_counter()
                step.predict(rows)
                times[compiled].append((time.perf_counter() - started) * 1000)
        use(swapped, False)
        eager, fast = statistics.median(times[False]), statistics.median(times[True])
        same = (tokens[False] == tokens[True]).float().mean().item()
        results[str(rows)] = {"engine_ms": eager, "compiled_ms": fast, "ratio": fast / eager, "same_token": same}
    print(f"model {engine.name}; {platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"threads {args.threads}; context {args.context}; {len(swapped)} products compiled in {compile_s:.0f} s")
    print(f"{'rows':>5} {'engine ms':>10} {'compiled ms':>12} {'ratio':>6} {'same token':>10}")
    for rows, r in results.items():
        print(f"{rows:>5} {r['engine_ms']:>10.2f} {r['compiled_ms']:>12.2f} {r['ratio']:>6.2f} {r['same_token']:>10.3f}")
    print(json.dumps({"benchmark": "compiled_step", "threads": args.threads, "context": args.context,
                      "compile_s": round(compile_s, 1), "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
