"""What this machine runs fastest, measured once per machine and model shape and kept on disk.

A small model's step on a CPU is bound by reading its weights, and how fast a product runs depends on the
row count in ways no rule of thumb gets right on every machine (float16 weights halve the bytes but have no
fast kernel for many rows on AVX2; a rows-first float32 product falls onto a slow kernel for 2-16 rows). So
the engine times whole forwards (`measure`) and picks one kernel (`projections.KERNELS`) for every product
of a decoding step, the fastest of those that keep a row's bits whatever rows run beside it, plus the
kernels for calls that mix text with gap rows and for calls of many rows, and measures how much a forward
over k query rows costs against one over a single row (`row_cost`), which decides how far the sampler
drafts (`engine.denoise.drafting`).

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
from dataclasses import asdict
from pathlib import Path

import torch
import torch.nn.functional as F

from engine.kernels.calibration import EXACT, UNMEASURED, VERSION, Calibration
from engine.kernels.projections import (
    BLOCKS,
    INT4,
    KERNELS,
    LINEAR,
    LOW,
    MAX_TABLE_ROWS,
    MAX_WIDE_ROWS,
    FusedProjections,
    Kernel,
)
from engine.models.layers import decoding_attention
from engine.models.transformer import Transformer

MIN_WEIGHT_BYTES = 32 << 20  # below this the weights stay in cache: nothing to gain from float16
ROW_COUNTS = (1, 2, 4, 8, 16)
DECODE_WEIGHTS = {1: 0.6, 2: 0.2, 4: 0.1, 8: 0.05, 16: 0.05}  # share of decoding rows per row count (a guess)
HOPELESS = 1.5  # a candidate this much slower than the fastest after a round is not timed again
COST_ROWS = (1, 2, 3, 5, 9, 16)  # query rows whose forward is timed for `row_cost` (between: interpolated)
MOST_ROWS = max(COST_ROWS)
WIDE_ROWS = (48, MAX_WIDE_ROWS)  # rows of the calls timed for the kernel of calls over MAX_TABLE_ROWS rows
QUANTIZED = (BLOCKS, INT4)  # kernels on the checkpoint's own blocks: only some products have them


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
            return Calibration.from_json(data)
    except (OSError, ValueError, KeyError):
        pass
    found = measure(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    temp.write_text(json.dumps({"version": VERSION, **asdict(found)}, indent=1) + "\n")
    temp.replace(path)
    return found


def _path(model: Transformer) -> Path:
    from engine.loading.gguf_base import cache_root

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
    """Choose the kernel by timing whole forwards, then measure the forward's row cost.

    Kernels timed alone mislead: inside a forward they share the memory bus and the caches with every
    other product and with attention, and a mix chosen product by product ran slower end to end than
    plain float32 on an AVX2 machine. Trying shapes one by one inside whole forwards was no better: the
    differences between kernels for one shape are within the noise of a loaded machine, and the mixes it
    chose differed from run to run. So each candidate is one kernel for every product (where a product
    lacks it, `linear`), timed as full forwards over 1..16 query rows against a short cache. Decoding
    takes the fastest kernel among those that give a row the same bits whatever rows run beside it
    (`_row_invariant`: on an AVX2 machine only `half`; on a 2-core Xeon with AVX-512 and AMX `bfloat16`
    and `blocks`, not `half`; the float32 kernels change the last bits with the row count, which flips
    near-ties between a step that verifies drafts and one-token-per-step decoding); the exact table takes,
    per row count, the faster of the float32 kernels, and the table for calls that mix text rows with gap
    rows (no decoding step) the faster of those and the decoding kernel.

    The kernels on the checkpoint's own blocks (`QUANTIZED`) exist for some products only (SmolLM2's
    blocks, not its 8-bit head): they race in a second round against the first round's choice, which the
    products without them keep, and serve decoding steps alone (text rows keep the first round's kernels,
    so a text row recomputed after an edit gets the bits the prefill gave it)."""
    products = model.products()
    for p in products:
        p.set_kernels((*LOW, *(LINEAR,) * (MAX_TABLE_ROWS - len(LOW))))  # makes the copies `_race` times
    kernels = [k for k in KERNELS if k not in QUANTIZED and any(k in p.available for p in products)]
    timer = _ForwardTimer(model)
    timed = _race(timer, products, kernels, ROW_COUNTS)
    steady = [k for k in kernels if _row_invariant(products, k)] or kernels
    fastest = min(steady, key=lambda k: decode_cost(timed[k]))
    exact = _table({rows: min(EXACT, key=lambda k: timed[k][rows]) for rows in ROW_COUNTS})
    mixed = _table({rows: min((fastest, *EXACT), key=lambda k: timed[k][rows]) for rows in ROW_COUNTS})
    for p in products:
        p.set_kernels((fastest,) * MAX_TABLE_ROWS)
    decoding = _quantized_kernel(timer, products, fastest)
    tables = {p.shape_key: ((decoding if decoding in p.available else fastest),) * MAX_TABLE_ROWS for p in products}
    for p in products:
        p.wide = fastest  # its reduced copy stays for `_wide_kernel` to time
        p.set_kernels(tables[p.shape_key])
    wide = _wide_kernel(timer, products, fastest)
    for p in products:
        p.mixed = mixed
    return Calibration(tables, {p.shape_key: exact for p in products}, _row_cost(timer), wide, mixed,
                       steady_rows(products, wide))


def _quantized_kernel(timer: _ForwardTimer, products: list[FusedProjections], fastest: Kernel) -> Kernel:
    """The decoding kernel: `fastest`, or a kernel on the checkpoint's own blocks where one is row-invariant
    and faster in whole forwards, the products without blocks keeping `fastest`."""
    candidates = [k for k in QUANTIZED if any(k in p.available for p in products) and _row_invariant(products, k)]
    if not candidates:
        return fastest
    timed = _race(timer, products, [fastest, *candidates], ROW_COUNTS, fallback=fastest)
    return min([fastest, *candidates], key=lambda k: decode_cost(timed[k]))


def _wide_kernel(timer: _ForwardTimer, products: list[FusedProjections], decoding: Kernel) -> Kernel:
    """The kernel for calls of more than MAX_TABLE_ROWS rows (a prefill, or the few dozen rows of a step
    after an edit), timed as whole forwards at WIDE_ROWS rows, the kernels taking turns: a float32 kernel,
    or the decoding kernel when that is a reduced-precision copy (`LOW`) and faster. Timed alone `columns`
    ran 1.1-1.5x faster than `linear` on a 2-core AVX2 machine; inside a prefill it ran slower. On a 2-core
    Xeon with AMX, `bfloat16` took a 1,024-token prefill from 0.96x transformers' float32 one to 0.56x
    (bench.step), and quality held (README, Figures)."""
    candidates = [*EXACT, decoding] if decoding in LOW else list(EXACT)
    timed = dict.fromkeys(candidates, 0.0)
    for rows in WIDE_ROWS:
        best = dict.fromkeys(candidates, float("inf"))
        for _ in range(2):
            for kernel in candidates:
                for p in products:
                    p.wide = kernel
                best[kernel] = min(best[kernel], timer(rows, decoding=False))
        for kernel in candidates:
            timed[kernel] += best[kernel]
    return min(candidates, key=timed.__getitem__)


def _race(timer: _ForwardTimer, products: list[FusedProjections], candidates: list[Kernel],
          row_counts: tuple[int, ...], rounds: int = 5, fallback: Kernel = LINEAR) -> dict[Kernel, dict[int, float]]:
    """The fastest of `rounds` forwards at each row count with each candidate kernel for every product
    (`fallback` where a product lacks it), in milliseconds, the candidates taking turns within each round:
    other work on the machine then slows every candidate alike instead of whichever happened to run while
    it was busy."""

    def use(kernel: Kernel) -> None:
        for p in products:  # not set_kernels: that would drop and remake the float16 copies
            p.kernels = (kernel if kernel in p.available else fallback,) * MAX_TABLE_ROWS

    best = {kernel: dict.fromkeys(row_counts, float("inf")) for kernel in candidates}
    for kernel in candidates:  # warm-up: ONNX Runtime sessions, first touches
        use(kernel)
        timer(row_counts[0])
    running = list(candidates)
    for _ in range(rounds):
        for kernel in running:
            use(kernel)
            for rows in row_counts:
                best[kernel][rows] = min(best[kernel][rows], timer(rows))
        fastest = min(decode_cost(best[k]) for k in running)
        running = [k for k in running if decode_cost(best[k]) < HOPELESS * fastest]
    return best


def _row_invariant(products: list[FusedProjections], kernel: Kernel) -> bool:
    """Whether `kernel` gives each row of a 1..MOST_ROWS-row call exactly what it gives the row alone,
    for one product of every shape, in a plain call and in a decoding step's (the LoRA added)."""
    first: dict[str, FusedProjections] = {}
    for p in products:
        if kernel in p.available:
            first.setdefault(p.shape_key, p)
    if not first:
        return False
    generator = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for p in first.values():
            saved, p.kernels = p.kernels, (kernel,) * MAX_TABLE_ROWS
            try:
                for rows in (2, 3, 8, MOST_ROWS):
                    x = torch.randn(1, rows, p.weight.shape[1], generator=generator)
                    alone = torch.cat([p.product(x[:, i : i + 1], p.width) for i in range(rows)], 1)
                    if not torch.equal(p.product(x, p.width), alone):
                        return False
                    if p.up is not None and not torch.equal(decoding_call(p, x), torch.cat(
                            [decoding_call(p, x[:, i : i + 1]) for i in range(rows)], 1)):
                        return False
            finally:
                p.kernels = saved
    return True


class DecodingRows:
    """A decoding step's adapter as fused products see it (`layers.Adapt`): every one of `rows` rows is a
    gap row and takes the LoRA; attention is a decoding step's (rows apart; every key is real)."""

    def __init__(self, rows: int) -> None:
        self.rows, self.every_row = torch.arange(rows), True

    def project(self, layer: int, name: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("fused products fold the LoRA in")

    def attend(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return decoding_attention(q, k, v)


def decoding_call(p: FusedProjections, x: torch.Tensor) -> torch.Tensor:
    """`p`'s outputs for the rows of x as a decoding step computes them (the LoRA added), concatenated."""
    return torch.cat(p(x, DecodingRows(x.numel() // x.shape[-1]), 0), -1)


STEADY_PIECES = (256, 128, 64, 32, MAX_TABLE_ROWS)  # piece sizes `steady_rows` tries, largest first
STEADY_SAMPLES = (17, 24, 33, 48, 64, 100, 128, 150, 200, 256)  # row counts it checks up to a piece size


def steady_rows(products: list[FusedProjections], wide: Kernel) -> dict[str, int]:
    """Per weight shape, the most rows a call of the reduced-precision `wide` kernel may take in one piece
    (0: any number) and still give each row the bits it gets alone.

    A prefill computes the keys and values of fixed text in one wide call, and a later step recomputes a
    text row alone (the row before a gap whose first token is written again), so the two must agree bit
    for bit or one-token-per-step decoding and verified drafting part ways. On a 2-core Xeon with AMX the
    packed bfloat16 product keeps a row's bits at any row count for 576-wide inputs, but for the
    1,536-wide input of SmolLM2's down projection only up to about 130 rows (150 rows: some rows differ).
    Checked at `STEADY_SAMPLES` row counts, not at every count."""
    if wide not in LOW:
        return {}
    found: dict[str, int] = {}
    first: dict[str, FusedProjections] = {}
    for p in products:
        first.setdefault(p.shape_key, p)
    generator = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for shape, p in first.items():
            saved = p.wide, p.steady_rows
            p.wide = wide
            try:
                for piece in (0, *STEADY_PIECES):
                    p.steady_rows = piece
                    counts = [r for r in STEADY_SAMPLES if not piece or r <= 2 * piece]
                    if all(_keeps_bits(p, rows, generator) for rows in counts):
                        if piece:
                            found[shape] = piece
                        break
            finally:
                p.wide, p.steady_rows = saved
    return found


def _keeps_bits(p: FusedProjections, rows: int, generator: torch.Generator) -> bool:
    """Whether a call of `rows` text rows gives each row what it gets alone (by the `mixed` table, as a
    text row recomputed after an edit runs)."""
    x = torch.randn(1, rows, p.weight.shape[1], generator=generator)
    alone = torch.cat([p.product(x[:, i : i + 1], p.width, mixed=True) for i in range(rows)], 1)
    return torch.equal(p.product(x, p.width), alone)


def decode_cost(timed: dict[int, float]) -> float:
    """A candidate's forward times (ms per row count) weighted toward few rows, as decoding runs them.
    One kernel serves every row count of a decoding step (1..MAX_TABLE_ROWS rows), so that a row gets the
    same logits whether a step runs it alone or with drafts: verified drafting then writes exactly what
    one-token-per-step decoding writes."""
    weights = {rows: DECODE_WEIGHTS.get(rows, 0.0) for rows in timed}
    return sum(t * weights[rows] for rows, t in timed.items()) / (sum(weights.values()) or 1.0)


def _table(best: dict[int, str]) -> tuple[str, ...]:
    """The kernel per row count 1..MAX_TABLE_ROWS from the measured row counts: each row count takes the
    choice of the nearest measured one at or below it."""
    out, current = [], LINEAR
    for rows in range(1, MAX_TABLE_ROWS + 1):
        current = best.get(rows, current)
        out.append(current)
    return tuple(out)


class _ForwardTimer:
    """A plain forward over k query rows after `context` cached positions of random tokens, timed."""

    def __init__(self, model: Transformer, context: int = 256) -> None:
        from engine.models.layers import ForwardContext, LayerKV

        self.model, self.context = model, context
        shape = model.shape
        most = max(MOST_ROWS, *WIDE_ROWS)
        self.ids = torch.randint(0, shape.vocab_size, (1, context + most))
        with torch.inference_mode():
            ctx = ForwardContext([None] * shape.num_hidden_layers)
            model(self.ids[:, :context], ctx=ctx)
        self.layers = [LayerKV(F.pad(c.k, (0, 0, 0, most)), F.pad(c.v, (0, 0, 0, most)))
                       for c in ctx.layers if c is not None]
        self.real = torch.ones(1, context + most, dtype=torch.bool)

    def __call__(self, k: int, decoding: bool = True) -> float:
        """One forward over `k` rows, in milliseconds: as a decoding step runs them (every row a gap row,
        the adapter's LoRA added where the model has one), or as fixed text (`decoding` False)."""
        from engine.models.layers import ForwardContext

        query = torch.arange(self.context, self.context + k)[None]
        ctx = ForwardContext(list(self.layers), self.real, query_index=query,
                             adapt=DecodingRows(k) if decoding else None)
        with torch.inference_mode():
            started = time.perf_counter()
            self.model(self.ids[:, self.context : self.context + k], query, None, ctx,
                       logits_at=(torch.zeros(k, dtype=torch.long), torch.arange(k)))
            return (time.perf_counter() - started) * 1000


def _row_cost(timer: _ForwardTimer) -> tuple[float, ...]:
    """A forward over k query rows relative to k = 1, for k = 1..MOST_ROWS (timed at COST_ROWS,
    interpolated between), with the kernels just chosen."""
    timed = dict.fromkeys(COST_ROWS, float("inf"))
    for k in COST_ROWS:
        timer(k)  # warm-up
    for _ in range(5):  # row counts take turns, as candidates do in `_race`
        for k in COST_ROWS:
            timed[k] = min(timed[k], timer(k))
    for k in COST_ROWS:  # more rows never cost less: a lower time is another row count's disturbed run
        timed[k] = min(timed[j] for j in COST_ROWS if j >= k)
    points = sorted(timed)
    costs = []
    for k in range(1, MOST_ROWS + 1):
        lo = max(p for p in points if p <= k)
        hi = min(p for p in points if p >= k)
        share = 0.0 if hi == lo else (k - lo) / (hi - lo)
        costs.append(timed[lo] + share * (timed[hi] - timed[lo]))
    return tuple(round(c / costs[0], 3) for c in costs)
