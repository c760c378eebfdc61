"""What this machine runs fastest for a model: the measurement (`engine.loading.tuning` decides when it runs
and keeps what it finds on disk).

A small model's step on a CPU is bound by reading its weights, and how fast a product runs depends on the
row count in ways no rule of thumb gets right on every machine (float16 weights halve the bytes but have no
fast kernel for many rows on AVX2; a rows-first float32 product falls onto a slow kernel for 2-16 rows). So
the engine times whole forwards (`measure`) and picks one kernel (`projections.KERNELS`) for every product
of a decoding step, the fastest of those that keep a row's bits whatever rows run beside it, plus the
kernels for calls that mix text with gap rows and for calls of many rows, and measures how much a forward
over k query rows costs against one over a single row (`row_cost`), which decides how far the sampler
drafts (`engine.denoise.drafting`).

The measurement runs in pieces (`measuring`, a generator: `Steps`), so that a server can run it between
requests; `measure` runs it to the end.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import TypeVar, cast

import torch
import torch.nn.functional as F

from engine.kernels.calibration import EXACT, Calibration
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

ROW_COUNTS = (1, 2, 4, 8, 16)
DECODE_WEIGHTS = {1: 0.6, 2: 0.2, 4: 0.1, 8: 0.05, 16: 0.05}  # share of decoding rows per row count (a guess)
HOPELESS = 1.5  # a candidate this much slower than the fastest after a round is not timed again
COST_ROWS = (1, 2, 3, 5, 9, 16)  # query rows whose forward is timed for `row_cost` (between: interpolated)
MOST_ROWS = max(COST_ROWS)
WIDE_ROWS = (48, MAX_WIDE_ROWS)  # rows of the calls timed for the kernel of calls over MAX_TABLE_ROWS rows
QUANTIZED = (BLOCKS, INT4)  # kernels on the checkpoint's own blocks: only some products have them
T = TypeVar("T")
Steps = Generator[None, None, T]
"""A measurement in pieces: each `next` runs one piece (about one forward, or one product's copies) and the
generator returns its result. Between pieces the caller may run the model for other work, provided it puts
back the products' kernel state the measurement left (`engine.loading.background`); no piece leaves a
thread-local mode (inference mode) set across a yield."""


def measure(model: Transformer) -> Calibration:
    """This machine's calibration for `model` (fused), measured now."""
    return run(measuring(model))


def run(steps: Steps[T]) -> T:
    """What `steps` returns, its pieces run one after the other."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return cast(T, done.value)


def measuring(model: Transformer) -> Steps[Calibration]:
    """Choose the kernel by timing whole forwards, then measure the forward's row cost.

    Kernels timed alone mislead: inside a forward they share the memory bus and the caches with every
    other product and with attention, and a mix chosen product by product ran slower end to end than
    plain float32 on an AVX2 machine. Trying shapes one by one inside whole forwards was no better: the
    differences between kernels for one shape are within the noise of a loaded machine, and the mixes it
    chose differed from run to run. So each candidate is one kernel for every product (where a product
    lacks it, `linear`), timed as full forwards over 1..16 query rows against a short cache. Decoding
    takes the fastest kernel among those that give a row the same bits whatever rows run beside it
    (`row_invariant`: on an AVX2 machine only `half`; on a 2-core Xeon with AVX-512 and AMX `bfloat16`
    and `blocks`, not `half`; on the Zen 4 EPYC `half`, `bfloat16` (in column pieces:
    `engine.kernels.packed`) and `int4`; the float32 kernels change the last bits with the row count, which flips
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
        yield
    kernels = [k for k in KERNELS if k not in QUANTIZED and any(k in p.available for p in products)]
    timer = _ForwardTimer(model)
    yield
    timed = yield from _race(timer, products, kernels, ROW_COUNTS)
    steady = []
    for k in kernels:
        if row_invariant(products, k):
            steady.append(k)
        yield
    fastest = min(steady or kernels, key=lambda k: decode_cost(timed[k]))
    exact = _table({rows: min(EXACT, key=lambda k: timed[k][rows]) for rows in ROW_COUNTS})
    mixed = _table({rows: min((fastest, *EXACT), key=lambda k: timed[k][rows]) for rows in ROW_COUNTS})
    for p in products:
        p.set_kernels((fastest,) * MAX_TABLE_ROWS)
        yield
    decoding = yield from _quantized_kernel(timer, products, fastest)
    tables = {p.shape_key: ((decoding if decoding in p.available else fastest),) * MAX_TABLE_ROWS for p in products}
    for p in products:
        p.wide = fastest  # its reduced copy stays for `_wide_kernel` to time
        p.set_kernels(tables[p.shape_key])
        yield
    wide = yield from _wide_kernel(timer, products, fastest)
    for p in products:
        p.mixed = mixed
    row_cost = yield from _row_cost(timer)
    steady_pieces = yield from steady_rows(products, wide)
    return Calibration(tables, {p.shape_key: exact for p in products}, row_cost, wide, mixed, steady_pieces)


def _quantized_kernel(timer: _ForwardTimer, products: list[FusedProjections], fastest: Kernel) -> Steps[Kernel]:
    """The decoding kernel: `fastest`, or a kernel on the checkpoint's own blocks where one is row-invariant
    and faster in whole forwards, the products without blocks keeping `fastest`."""
    candidates = []
    for k in QUANTIZED:
        if any(k in p.available for p in products) and row_invariant(products, k):
            candidates.append(k)
        yield
    if not candidates:
        return fastest
    timed = yield from _race(timer, products, [fastest, *candidates], ROW_COUNTS, fallback=fastest)
    return min([fastest, *candidates], key=lambda k: decode_cost(timed[k]))


def _wide_kernel(timer: _ForwardTimer, products: list[FusedProjections], decoding: Kernel) -> Steps[Kernel]:
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
                yield
        for kernel in candidates:
            timed[kernel] += best[kernel]
    return min(candidates, key=timed.__getitem__)


def _race(timer: _ForwardTimer, products: list[FusedProjections], candidates: list[Kernel],
          row_counts: tuple[int, ...], rounds: int = 5,
          fallback: Kernel = LINEAR) -> Steps[dict[Kernel, dict[int, float]]]:
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
        yield
    running = list(candidates)
    for _ in range(rounds):
        for kernel in running:
            use(kernel)
            for rows in row_counts:
                best[kernel][rows] = min(best[kernel][rows], timer(rows))
                yield
        fastest = min(decode_cost(best[k]) for k in running)
        running = [k for k in running if decode_cost(best[k]) < HOPELESS * fastest]
    return best


def row_invariant(products: list[FusedProjections], kernel: Kernel) -> bool:
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
    gap row and takes the LoRA; attention is a decoding step's (`decoding_attention`; every key is real)."""

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


def steady_rows(products: list[FusedProjections], wide: Kernel) -> Steps[dict[str, int]]:
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
    for shape, p in first.items():
        saved = p.wide, p.steady_rows
        try:
            for piece in (0, *STEADY_PIECES):
                counts = [r for r in STEADY_SAMPLES if not piece or r <= 2 * piece]
                kept = True
                for rows in counts:
                    p.wide, p.steady_rows = wide, piece
                    kept = _keeps_bits(p, rows, generator)
                    p.wide, p.steady_rows = saved
                    yield
                    if not kept:
                        break
                if kept:
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
    with torch.inference_mode():
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


def _row_cost(timer: _ForwardTimer) -> Steps[tuple[float, ...]]:
    """A forward over k query rows relative to k = 1, for k = 1..MOST_ROWS (timed at COST_ROWS,
    interpolated between), with the kernels just chosen."""
    timed = dict.fromkeys(COST_ROWS, float("inf"))
    for k in COST_ROWS:
        timer(k)  # warm-up
        yield
    for _ in range(5):  # row counts take turns, as candidates do in `_race`
        for k in COST_ROWS:
            timed[k] = min(timed[k], timer(k))
            yield
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
