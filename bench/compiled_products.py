"""The weight products of one decoding step on low-bit kernels, eager and compiled by inductor, against today's.

    python -m bench.compiled_products [--rows 1,2,4,8,16] [--layers 30] [--rounds 7] [--group 32]
                                      [--backends CPP] [--cache DIR] [--paths today,eager_int8,...]

Every fused product of the bundled model's decoding step (per block q/k/v, o, gate/up and down with the
adapter's update added into the weight, as a decoding step runs them; then the head), at each row count,
by six paths:
  today          the engine's own products (the kernel this machine's calibration picked: on the AMX Xeon
                 the packed bfloat16 copy), called through the model's modules as a decoding step calls them;
  eager_int8     torch's `_weight_int8pack_mm` (int8 weights, one bfloat16 scale per output row);
  eager_int4     torch's `_weight_int4pack_mm_for_cpu` (4-bit codes, bfloat16 scale and offset per group);
  compiled_int8  `F.linear(x, w_int8.to(bfloat16)) * scales` compiled by inductor with freezing and
                 max-autotune: its post-grad pass rewrites it into the int8 weight-only product, which the
                 C++ GEMM template (`--backends`) runs on its AVX-512 or AMX micro-kernel;
  compiled_int4  `_weight_int4pack_mm_for_cpu` compiled the same way (the int4 templates);
  tiles_int4     the same 4-bit codes on dcomplete's own AMX kernel (`engine.kernels.tile_int4`, built here
                 first when this CPU has the tiles; `--group 32` only).
A path's figure is one whole step's products (every block's, then the head: about 135 M weights streamed),
median of `--rounds`, the paths taking turns within each round (A B C A B C ...), so weights come from memory
as in a step and other work on the machine slows every path alike; quote the ratios. Each product is compiled
alone (static shapes: its own weight frozen in, one graph per row count) and called through inductor's
compiled callable directly, without dynamo's guards (which cost ~0.3 ms a call at 30 compiled modules).

Also reported: the micro-kernel class in the generated code (or `aten` where autotune chose ATen's op),
compile time per shape and row count (the first product of a shape autotunes; the others reuse its choice),
and the error of each path against the bfloat16 product of the same input and weight, over random inputs
(max abs error, and that over the reference's max abs value). Inductor's FX graph cache keys a frozen
weight by its shape alone, and a hit hands every later product of a shape the packed weight the template
made of the first one (measured: every later block's product wrong); each compile here adds the weight's
digest to the key (`WeightKey`), so a second run with the same `--cache` loads each product's own graph:
what a second process pays.
The last line is JSON.

Measured on the 2-core Xeon (AVX-512, AVX512-BF16, AMX), torch 2.13, one thread (two threads ran 10-20x
slower for every path while other jobs held the cores: OpenMP barriers waiting on a descheduled thread), one
step's products against today's packed bfloat16 copies: static row buckets pick the vectorized int8 / AVX-512
int4 micro-kernel up to 4 rows and AMX from 5 on, so a row's bits change with its neighbours (the engine
cannot decode on them); eager int4 is fastest at one row (0.29-0.30x today) but grows 5x by 16 rows; the int8
product compiled for any row count (`--dynamic`) runs the AMX kernel at every row count: 0.58x today's time
from 1 to 16 rows (1.13x from 1 to 16), row-invariant, in ~60 s of compiling for the 121 products (0.15 s
each from a kept cache). `--dynamic` int4 finds no template (NoValidChoicesError with `--backends CPP`).
Whole step after 1,024 tokens (bench.compiled_step): 0.80-0.82x the engine's at 1, 4 and 16 rows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from engine.kernels.compiled_int8 import Int8Pattern, Int8Weight
from engine.kernels.tile_int4 import TileInt4Product, pack
from engine.kernels.weight_key import WeightKey

PATHS = ("today", "eager_int8", "eager_int4", "compiled_int8", "compiled_int4", "tiles_int4")


@dataclass
class Product:
    """One product of a decoding step: the weight it runs (the adapter's update added in), its low-bit
    forms, and the compiled callables per row count."""

    name: str
    weight: torch.Tensor  # (N, K) float32
    int8: tuple[torch.Tensor, torch.Tensor] = field(init=False)
    int4: tuple[torch.Tensor, torch.Tensor] = field(init=False)
    tiles: TileInt4Product | None = field(init=False, default=None)
    compiled: dict[tuple[str, int], Callable[..., Any]] = field(default_factory=dict)

    def quantize(self, group: int, int4: bool = True, tiles: Any = None) -> None:
        """The int8 form (one scale per output row) and, with `int4`, the 4-bit one (`group` columns per
        scale and offset; torch's kernel takes output widths that are multiples of 16), also on `tiles`
        (the built AMX kernel) when given."""
        w = self.weight
        int8 = Int8Weight.of(w)
        self.int8 = (int8.codes, int8.scales)
        if not int4:
            return
        n, k = w.shape
        groups = w.view(n, k // group, group)
        low, high = groups.amin(-1), groups.amax(-1)
        step = ((high - low) / 15).clamp(min=1e-8).to(torch.bfloat16).float()
        offset = (low + 8 * step).to(torch.bfloat16).float()
        codes = ((groups - offset[..., None]) / step[..., None] + 8).round().clamp(0, 15).view(n, k)
        packed = torch._convert_weight_to_int4pack_for_cpu(codes.to(torch.int32), 1)
        self.int4 = (packed, torch.stack([step.T, offset.T], -1).to(torch.bfloat16).contiguous())
        if tiles is not None:
            self.tiles = TileInt4Product(pack(codes.to(torch.int32), step, offset), tiles)


class Int4Linear(nn.Module):
    def __init__(self, packed: torch.Tensor, scales: torch.Tensor, group: int) -> None:
        super().__init__()
        self.register_buffer("packed", packed)
        self.register_buffer("scales", scales)
        self.group = group

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1]).to(torch.bfloat16)
        y = torch.ops.aten._weight_int4pack_mm_for_cpu(rows, self.packed, self.group, self.scales)
        return y.float().view(*x.shape[:-1], y.shape[-1])


def compile_direct(module: nn.Module, x: torch.Tensor, dynamic: bool = False) -> Callable[[torch.Tensor], torch.Tensor]:
    """Inductor's compiled callable of `module` at x's shape (frozen weights, max-autotune as configured;
    `dynamic`: any row count, x's dimension 1), called without dynamo: x in, the product out."""
    from torch._inductor.compile_fx import compile_fx

    box: dict[str, Any] = {}

    def backend(gm: torch.fx.GraphModule, example: list[Any]) -> Callable[..., Any]:
        box["fn"], box["symbolic"] = compile_fx(gm, example), [not isinstance(e, torch.Tensor) for e in example]
        return box["fn"]

    if dynamic:
        torch._dynamo.mark_dynamic(x, 1)
    with torch._inductor.config.patch(post_grad_custom_post_pass=WeightKey(*module.buffers())):
        torch.compile(module, backend=backend, fullgraph=True, dynamic=None if dynamic else False)(x)
    fn, symbolic = box["fn"], box["symbolic"]

    def call(x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = fn(*[x.shape[1] if sym else x for sym in symbolic])[0]
        return out

    return call


def generated_since(cache: Path, since: float) -> list[str]:
    """The Python modules inductor wrote into `cache` since `since` (its output code, C++ kernels inside)."""
    found = []
    for path in cache.rglob("*.py"):
        try:
            if path.stat().st_mtime >= since:
                found.append(path.read_text(errors="replace"))
        except OSError:
            pass
    return found


def kernel_names(code: str, kind: str) -> set[str]:
    """The GEMM kernel in generated code, by the micro-kernel class of inductor that writes such code (the
    class names themselves do not appear): AMX tiles, the AVX-512 int4 kernel, the vectorized one, or ATen's
    op where autotune chose it."""
    if "kernel_micro_gemm" not in code:
        return {"aten"} if re.search(r"_weight_int(8|4)pack_mm", code) else set()
    if "_tile_" in code:
        return {"CppMicroGemmWoQInt4Amx" if kind == "compiled_int4" else "CppMicroGemmAMX"}
    if "convert_int4_to_int8" in code:
        return {"CppMicroGemmWoQInt4Avx512"}
    return {"CppMicroGemmFP32Vec"}


def products_of(engine: Any, layers: int) -> tuple[list[Product], list[Callable[[int, dict[int, torch.Tensor]], None]]]:
    """The step's products with their weights, and per product today's call of it (the engine's module)."""
    from engine.loading.calibrate import DecodingRows

    model = engine.loaded.model
    found: list[Product] = []
    today: list[Callable[[int, dict[int, torch.Tensor]], None]] = []
    for i, block in enumerate(model.model.layers[:layers]):
        for name, module in (("qkv", block.self_attn.qkv), ("o", block.self_attn.out),
                             ("gate_up", block.mlp.gate_up), ("down", block.mlp.down)):
            w = module.weight
            if module.up is not None:
                w = torch.addmm(module.weight, module.up, module._full[module.width :], alpha=module.scale)
            found.append(Product(f"{name}.{i}", w.detach().float().contiguous()))
            today.append(lambda rows, xs, m=module, i=i: m(xs[m.weight.shape[1]].view(1, rows, -1),
                                                           DecodingRows(rows), i))
    head = model.head
    found.append(Product("head", head.weight.detach().float().contiguous()))
    today.append(lambda rows, xs: model.project(xs[head.weight.shape[1]].view(1, rows, -1)))
    return found, today


def run_path(path: str, products: list[Product], today: list[Callable[..., None]], rows: int,
             xs: dict[int, torch.Tensor], group: int) -> None:
    if path == "today":
        for call in today:
            call(rows, xs)
        return
    for p in products:
        x = xs[p.weight.shape[1]]
        if path == "eager_int8":
            torch._weight_int8pack_mm(x.to(torch.bfloat16), *p.int8).float()
        elif path == "eager_int4":
            torch._weight_int4pack_mm_for_cpu(x.to(torch.bfloat16), p.int4[0], group, p.int4[1]).float()
        elif path == "tiles_int4":
            assert p.tiles is not None
            p.tiles(x)
        else:
            p.compiled[(path, rows)](x.view(1, rows, -1))


def outputs(path: str, p: Product, today: Callable[..., Any] | None, rows: int, x: torch.Tensor,
            group: int) -> torch.Tensor:
    if path == "today":
        assert today is not None
        y = today(rows, {x.shape[1]: x})
        return (torch.cat(y, -1) if isinstance(y, tuple) else y).reshape(rows, -1)
    if path == "eager_int8":
        return torch._weight_int8pack_mm(x.to(torch.bfloat16), *p.int8).float()
    if path == "eager_int4":
        return torch._weight_int4pack_mm_for_cpu(x.to(torch.bfloat16), p.int4[0], group, p.int4[1]).float()
    if path == "tiles_int4":
        assert p.tiles is not None
        return p.tiles(x)
    return p.compiled[(path, rows)](x.view(1, rows, -1)).reshape(rows, -1)


def compile_all(products: list[Product], rows_list: list[int], kinds: list[str], group: int,
                cache: Path, dynamic: bool) -> dict[str, Any]:
    """Compile every product at every row count (`dynamic`: once, for any row count); per (kind, shape,
    rows) the first product's compile seconds, the mean seconds of the others, and the micro-kernels in
    the generated code."""
    report: dict[str, Any] = {}
    for kind in kinds:
        for rows in ([max(2, rows_list[0])] if dynamic else rows_list):
            seen: dict[str, dict[str, Any]] = {}
            for p in products:
                shape = f"{p.weight.shape[0]}x{p.weight.shape[1]}"
                module = (Int8Pattern(Int8Weight(*p.int8)) if kind == "compiled_int8" else Int4Linear(*p.int4, group)).eval()
                x = torch.randn(1, rows, p.weight.shape[1])
                started, wall = time.perf_counter(), time.time()
                with torch.inference_mode():
                    call = compile_direct(module, x, dynamic)
                p.compiled.update({(kind, r): call for r in (rows_list if dynamic else [rows])})
                took = time.perf_counter() - started
                if shape in seen:
                    seen[shape]["rest_s"].append(took)
                else:
                    seen[shape] = {"first_s": took, "rest_s": [], "micro": set()}
                    for code in generated_since(cache, wall):
                        seen[shape]["micro"].update(kernel_names(code, kind))
            for shape, entry in seen.items():
                report[f"{kind}|{shape}|{rows}"] = {
                    "first_s": round(entry["first_s"], 2),
                    "rest_s": round(statistics.mean(entry["rest_s"]), 3) if entry["rest_s"] else None,
                    "count": 1 + len(entry["rest_s"]), "micro": sorted(entry["micro"]) or ["(cached)"]}
            print(f"compiled {kind} at {rows} rows", flush=True)
    return report


def errors(products: list[Product], today: list[Callable[..., Any]], paths: list[str], rows_list: list[int],
           group: int) -> dict[str, dict[str, float]]:
    """Worst error over every product and row count of each path against the bfloat16 product."""
    generator = torch.Generator().manual_seed(0)
    worst: dict[str, dict[str, float]] = {path: {"max_abs": 0.0, "rel": 0.0} for path in paths}
    with torch.inference_mode():
        for rows in rows_list:
            for p, call in zip(products, today):
                x = torch.randn(rows, p.weight.shape[1], generator=generator)
                ref = F.linear(x.to(torch.bfloat16).float(), p.weight.to(torch.bfloat16).float())
                for path in paths:
                    diff = (outputs(path, p, call, rows, x, group) - ref).abs().max().item()
                    worst[path]["max_abs"] = max(worst[path]["max_abs"], diff)
                    worst[path]["rel"] = max(worst[path]["rel"], diff / ref.abs().max().item())
    return worst


def keeps_rows(products: list[Product], today: list[Callable[..., Any]], paths: list[str], rows: int,
               group: int) -> dict[str, bool]:
    """Per path, whether each row of a `rows`-row call gets exactly the bits it gets alone (what the engine
    asks of a decoding kernel: `engine.loading.calibrate.row_invariant`), on the first product of each shape."""
    first: dict[tuple[int, ...], tuple[Product, Callable[..., Any]]] = {}
    for p, call in zip(products, today):
        first.setdefault(tuple(p.weight.shape), (p, call))
    generator = torch.Generator().manual_seed(1)
    kept = dict.fromkeys(paths, True)
    with torch.inference_mode():
        for p, call in first.values():
            x = torch.randn(rows, p.weight.shape[1], generator=generator)
            for path in paths:
                together = outputs(path, p, call, rows, x, group)
                alone = torch.cat([outputs(path, p, call, 1, x[i : i + 1], group) for i in range(rows)])
                kept[path] = kept[path] and torch.equal(together, alone)
    return kept


def configure(backends: str, cache: Path) -> None:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    import torch._dynamo.config as dynamo_config
    import torch._inductor.config as inductor_config

    inductor_config.freezing = True
    inductor_config.max_autotune = True
    inductor_config.max_autotune_gemm_backends = backends
    dynamo_config.recompile_limit = 1 << 20
    dynamo_config.accumulated_recompile_limit = 1 << 20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compiled_products", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--rows", default="1,2,4,8,16")
    parser.add_argument("--layers", type=int, default=30, help="blocks whose products run (the head always)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--group", type=int, default=32, choices=(32, 64, 128), help="int4 group size")
    parser.add_argument("--backends", default="CPP", help="inductor's max_autotune_gemm_backends (ATEN,CPP races)")
    parser.add_argument("--cache", type=Path, default=None, help="inductor cache folder (default: a new one)")
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dynamic", action="store_true",
                        help="compile each product once for any row count (the AMX kernels at every row count)")
    args = parser.parse_args(argv)
    paths = [p for p in args.paths.split(",") if p]
    if unknown := [p for p in paths if p not in PATHS]:
        parser.error(f"--paths: unknown {', '.join(unknown)} (use {', '.join(PATHS)})")
    rows_list = [int(r) for r in args.rows.split(",")]
    torch.set_num_threads(args.threads)
    cache = args.cache or Path(tempfile.mkdtemp(prefix="inductor-"))
    configure(args.backends, cache)

    from engine import Engine

    engine = Engine.load(args.model, device="cpu")
    products, today = products_of(engine, args.layers)
    tiles = None
    if "tiles_int4" in paths:
        from engine.loading.native_build import TILE_INT4

        tiles = TILE_INT4.library()
        if tiles is None or args.group != 32:
            parser.error("--paths tiles_int4: needs --group 32 and a CPU with AMX tiles and a C compiler")
    for p in products:
        p.quantize(args.group, int4=any(path.endswith("int4") for path in paths), tiles=tiles)
    picked = sorted({f"{p.shape_key}:{p.kernels[0]}" for p in engine.loaded.model.products()})
    started = time.perf_counter()
    compiled_kinds = [p for p in paths if p.startswith("compiled")]
    compile_report = compile_all(products, rows_list, compiled_kinds, args.group, cache, args.dynamic)
    compile_s = time.perf_counter() - started

    timed: dict[int, dict[str, float]] = {}
    with torch.inference_mode():
        for rows in rows_list:
            xs = {k: torch.randn(rows, k) for k in {p.weight.shape[1] for p in products}}
            samples: dict[str, list[float]] = {path: [] for path in paths}
            for path in paths:  # warm-up
                run_path(path, products, today, rows, xs, args.group)
            for _ in range(args.rounds):
                for path in paths:
                    t = time.perf_counter()
                    run_path(path, products, today, rows, xs, args.group)
                    samples[path].append((time.perf_counter() - t) * 1000)
            timed[rows] = {path: statistics.median(s) for path, s in samples.items()}
    worst = errors(products, today, paths, rows_list, args.group)
    kept = keeps_rows(products, today, paths, rows_list[-1], args.group) if rows_list[0] == 1 else {}

    base = "today" if "today" in paths else paths[0]
    print(f"model {engine.name}: {len(products)} products ({args.layers} blocks + head); "
          f"{platform.processor() or platform.machine()} ({torch.backends.cpu.get_cpu_capability()}), "
          f"torch {torch.__version__}, threads {args.threads}; int4 group {args.group}; backends {args.backends}")
    print(f"today's kernels: {', '.join(picked)}")
    print(f"median ms of one step's products over {args.rounds} interleaved rounds (x {base} in brackets)")
    print(f"{'rows':>5} " + " ".join(f"{p:>22}" for p in paths))
    for rows, row in timed.items():
        cells = " ".join(f"{row[p]:>12.2f} ({row[p] / row[base]:>5.2f}x)" for p in paths)
        print(f"{rows:>5} {cells}")
    print(f"{'16/1':>5} " + " ".join(f"{timed[rows_list[-1]][p] / timed[rows_list[0]][p]:>21.2f}x" for p in paths)
          if len(rows_list) > 1 else "")
    print("error against the bfloat16 product (worst over products and rows): "
          + "; ".join(f"{p} {e['max_abs']:.4f} abs, {e['rel']:.4f} rel" for p, e in worst.items()))
    if kept:
        print(f"a row's bits alone and beside {rows_list[-1] - 1} others: "
              + ", ".join(f"{p} {'same' if same else 'differ'}" for p, same in kept.items()))
    if compile_report:
        print(f"compile: {compile_s:.1f} s in all (cache {cache})")
        for key, entry in compile_report.items():
            print(f"  {key:<32} first {entry['first_s']:>6.2f} s, others {entry['rest_s']} s x{entry['count'] - 1}, "
                  f"{' '.join(entry['micro'])}")
    print(json.dumps({"benchmark": "compiled_products", "model": engine.name, "threads": args.threads,
                      "group": args.group, "backends": args.backends, "layers": args.layers,
                      "today_kernels": picked, "torch": torch.__version__,
                      "cpu": torch.backends.cpu.get_cpu_capability(), "compile_s": round(compile_s, 1),
                      "ms": {str(r): {p: round(v, 3) for p, v in row.items()} for r, row in timed.items()},
                      "errors": worst, "keeps_rows": kept, "dynamic": args.dynamic,
                      "compile": compile_report}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
