"""What this machine runs fastest, measured once per machine and model shape and kept on disk.

A small model's step on a CPU is bound by reading its weights, and how fast a product runs depends on the
row count in ways no rule of thumb gets right on every machine (float16 weights halve the bytes but have no
fast kernel for many rows on AVX2; a rows-first float32 product falls onto a slow kernel for 2-16 rows). So
the engine measures, for every fused weight shape of the model and every row count up to
`projections.MAX_TABLE_ROWS`, how fast each kernel the product offers (`projections.KERNELS`) runs, and keeps
the one fastest for decoding (`decode_kernel`), and how much a forward over k
query rows costs against one over a single row (`row_cost`), which decides how far the sampler drafts
(`engine.commit`). Each product is timed across all the model's layers (distinct weights, as a forward
streams them, not one matrix left warm in the cache).

Models whose weights fit in a CPU's caches (the tests' tiny models) are not measured: the defaults stand
(`projections.default_kernels`, drafting as on a GPU), and results stay exactly float32. On CUDA nothing is
measured either: rows are cheap there. The file lives under the user cache folder
(`calibration/<key>.json`, the key naming the CPU, threads, torch version and model shape);
`DCOMPLETE_CALIBRATION=off` skips it (float32 only, drafting by default).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from engine.models.projections import COLUMNS, HALF, LINEAR, MAX_TABLE_ROWS, FusedProjections
from engine.models.transformer import Transformer

MIN_WEIGHT_BYTES = 32 << 20  # below this the weights stay in cache: nothing to gain from float16
ROW_COUNTS = (1, 2, 4, 8, 16)
DECODE_WEIGHTS = {1: 0.6, 2: 0.2, 4: 0.1, 8: 0.05, 16: 0.05}  # share of decoding rows per row count (a guess)
EXACT = (LINEAR, COLUMNS)  # the kernels that keep a float32 model's results
COST_ROWS = (1, 2, 3, 5, 9, 16)  # query rows whose forward is timed for `row_cost` (between: interpolated)
VERSION = 6


@dataclass(frozen=True)
class Calibration:
    """`kernels[shape]`: the kernel per row count 1..MAX_TABLE_ROWS for a fused weight of that shape, and
    `exact[shape]` the same among the kernels that keep float32 results (`EXACT`); `row_cost[k - 1]`: a forward over k query rows
    against a short cache, relative to one row, with `kernels`."""

    kernels: dict[str, tuple[str, ...]]
    exact: dict[str, tuple[str, ...]]
    row_cost: tuple[float, ...]

    def apply(self, model: Transformer, half: bool) -> None:
        """Set every fused product's kernels; `half` False keeps the model exactly float32."""
        tables = self.kernels if half else self.exact
        for product in model.products():
            if product.shape_key in tables:
                product.set_kernels(tables[product.shape_key])


UNMEASURED = Calibration({}, {}, ())


def calibration_for(model: Transformer, device: torch.device) -> Calibration:
    """This machine's calibration for `model` (fused), from the cache folder or measured now and kept."""
    weights = sum(p.weight.numel() * p.weight.element_size() for p in model.products())
    if (device.type != "cpu" or weights < MIN_WEIGHT_BYTES
            or os.environ.get("DCOMPLETE_CALIBRATION", "") == "off"):
        return UNMEASURED
    path = _path(model)
    try:
        data = json.loads(path.read_text())
        if data.get("version") == VERSION:
            return Calibration({k: tuple(v) for k, v in data["kernels"].items()},
                               {k: tuple(v) for k, v in data["exact"].items()}, tuple(data["row_cost"]))
    except (OSError, ValueError, KeyError):
        pass
    found = measure(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    temp.write_text(json.dumps({"version": VERSION, **asdict(found)}, indent=1) + "\n")
    temp.replace(path)
    return found


def _path(model: Transformer) -> Path:
    from engine.gguf_base import cache_root

    shapes = ",".join(sorted({p.shape_key + "|" + ",".join(p.available) + (p.blocks.kind if p.blocks else "")
                              for p in model.products()}))
    what = f"{platform.machine()}|{_cpu_name()}|{torch.get_num_threads()}|{torch.__version__}|{shapes}"
    return cache_root() / "calibration" / f"{hashlib.sha256(what.encode()).hexdigest()[:24]}.json"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        return platform.processor()




def measure(model: Transformer) -> Calibration:
    """Time every kernel at every row count for each fused shape, then the forward's row cost."""
    by_shape: dict[str, list[FusedProjections]] = {}
    for product in model.products():
        by_shape.setdefault(product.shape_key, []).append(product)
    kernels: dict[str, tuple[str, ...]] = {}
    exact: dict[str, tuple[str, ...]] = {}
    with torch.inference_mode():
        for key, products in by_shape.items():
            for p in products:
                p.set_kernels((HALF,) * MAX_TABLE_ROWS)  # makes the float16 copies to time
            timed = {rows: _interleaved(products, torch.randn(1, rows, products[0].weight.shape[1]))
                     for rows in ROW_COUNTS}
            kernels[key] = (decode_kernel(timed),) * MAX_TABLE_ROWS
            exact[key] = _table({rows: min(EXACT, key=t.__getitem__) for rows, t in timed.items()})
            for p in products:
                p.set_kernels(kernels[key])
    return Calibration(kernels, exact, _row_cost(model))


def _interleaved(products: list[FusedProjections], x: torch.Tensor, rounds: int = 5) -> dict[str, float]:
    """The fastest of `rounds` timings of each kernel over `products` for input `x`, in milliseconds, the
    kernels taking turns within each round: other work on the machine then slows every kernel alike
    instead of whichever happened to run while it was busy."""

    def run(kernel: str) -> float:
        for p in products:
            p.kernels = (kernel,) * MAX_TABLE_ROWS
        started = time.perf_counter()
        for p in products:
            p.product(x, p.width)
        return (time.perf_counter() - started) * 1000

    available = products[0].available
    for kernel in available:
        run(kernel)  # warm-up: float16 copies, ONNX Runtime sessions
    best = dict.fromkeys(available, float("inf"))
    for _ in range(rounds):
        for kernel in available:
            best[kernel] = min(best[kernel], run(kernel))
    return best


def decode_kernel(timed: dict[int, dict[str, float]]) -> str:
    """The one kernel for every row count of a decoding step (1..MAX_TABLE_ROWS rows): the least time
    weighted toward few rows (decoding steps mostly run one to three). One kernel, not one per row count,
    so that a row gets the same logits whether a step runs it alone or with drafts: verified drafting
    then writes exactly what one-token-per-step decoding writes."""
    return min(timed[1], key=lambda k: sum(t[k] * DECODE_WEIGHTS.get(rows, 0.0) for rows, t in timed.items()))


def _table(best: dict[int, str]) -> tuple[str, ...]:
    """The kernel per row count 1..MAX_TABLE_ROWS from the measured row counts: each row count takes the
    choice of the nearest measured one at or below it."""
    out, current = [], LINEAR
    for rows in range(1, MAX_TABLE_ROWS + 1):
        current = best.get(rows, current)
        out.append(current)
    return tuple(out)


def _row_cost(model: Transformer, context: int = 256) -> tuple[float, ...]:
    """A plain forward over k query rows after `context` cached positions, relative to k = 1, for
    k = 1..max(COST_ROWS) (timed at COST_ROWS, interpolated between), with the kernels just chosen."""
    from engine.models.layers import ForwardContext, LayerKV

    shape = model.shape
    most = max(COST_ROWS)
    ids = torch.randint(0, shape.vocab_size, (1, context + most))
    with torch.inference_mode():
        ctx = ForwardContext([None] * shape.num_hidden_layers)
        model(ids[:, :context], ctx=ctx)
        layers = [LayerKV(F.pad(c.k, (0, 0, 0, most)), F.pad(c.v, (0, 0, 0, most))) for c in ctx.layers if c is not None]
        real = torch.ones(1, context + most, dtype=torch.bool)

        def forward(k: int) -> None:
            query = torch.arange(context, context + k)[None]
            model(ids[:, context : context + k], query, None, ForwardContext(list(layers), real, query_index=query),
                  logits_at=(torch.zeros(k, dtype=torch.long), torch.arange(k)))

        timed = dict.fromkeys(COST_ROWS, float("inf"))
        for k in COST_ROWS:
            forward(k)  # warm-up
        for _ in range(5):  # row counts take turns, as kernels do in `_interleaved`
            for k in COST_ROWS:
                started = time.perf_counter()
                forward(k)
                timed[k] = min(timed[k], time.perf_counter() - started)
    points = sorted(timed)
    costs = []
    for k in range(1, most + 1):
        lo = max(p for p in points if p <= k)
        hi = min(p for p in points if p >= k)
        share = 0.0 if hi == lo else (k - lo) / (hi - lo)
        costs.append(timed[lo] + share * (timed[hi] - timed[lo]))
    return tuple(round(c / costs[0], 3) for c in costs)
