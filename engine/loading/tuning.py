"""Which kernels a CPU load runs: this machine's calibration from the cache folder, or, until it has been
measured, a safe default at once and the measurement later, in pieces, between requests.

Measuring (`engine.loading.calibrate`) times about 130 whole forwards: 25 s on a quiet 2-core machine, minutes
on a busy one. A first start used to measure before it served anything, so a new user waited for it. Now a
load without a kept calibration applies `default_calibration` (no timing: it only checks which
reduced-precision copy keeps a row's bits beside other rows, well under a second) and hands back a
`BackgroundCalibration`; whoever runs the engine's thread (the language server's worker, the engine server's
batcher) calls `Engine.calibrate_step` when it has nothing else to do, each call one piece (about one
forward), until the last piece swaps the measured kernels in (`Calibration.apply`, as a load with the file
applies them), keeps the file and writes the prepared weights (`engine.loading.prepared`).

The default must keep a decoding row's bits whatever rows run beside it, as the measured choice does, or
verified drafting would stop writing what one-token-per-step decoding writes: so its decoding kernel is the
reduced-precision copy this CPU packs (bfloat16 where oneDNN has bfloat16 instructions, else float16) when it
passes that check (`calibrate.row_invariant`), the other copy when that one does, else float32; prefills
(`wide`) stay float32, and the row cost is a guess (`DEFAULT_ROW_COST`) until measured.

The file lives under the user cache folder (`calibration/<key>.json`, the key naming the CPU, threads, torch
version and model shape: a changed machine finds no file, and serves with the default while it measures
again). `DCOMPLETE_CALIBRATION`: `off` skips it (float32 only, drafting by default), `now` measures during
the load as before (benchmarks), `always` also measures models small enough to stay in the CPU's caches
(which are otherwise left exactly float32).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import cache
from pathlib import Path

import torch

from engine.kernels import row_attention
from engine.kernels.calibration import UNMEASURED, VERSION, Calibration
from engine.kernels.packed import LowWeight, packs_bfloat16
from engine.kernels.projections import (
    BF16,
    BLOCKS,
    HALF,
    INT4,
    LINEAR,
    MAX_TABLE_ROWS,
    FusedProjections,
    Kernel,
    default_kernels,
)
from engine.loading.calibrate import Steps, measure, measuring, row_invariant
from engine.models.transformer import Transformer

MODE_ENV = "DCOMPLETE_CALIBRATION"
MIN_WEIGHT_BYTES = 32 << 20  # below this the weights stay in cache: nothing to gain from float16
DEFAULT_ROW_COST = tuple(round(1.0 + 0.1 * k, 3) for k in range(MAX_TABLE_ROWS))
"""A forward over k rows against one, before it is measured: dearer than on a 2-core Xeon with AMX (1.4 at
16 rows), cheaper than float16 on an AVX2 machine (5.7); the sampler then drafts up to 4 tokens a step."""
State = tuple[tuple[Kernel, ...], Kernel, tuple[Kernel, ...], int, dict[Kernel, LowWeight],
              dict[Kernel, LowWeight]]


def calibration_for(model: Transformer, device: torch.device) -> tuple[Calibration, bool]:
    """The calibration a load of `model` (fused, its kernels attached) applies now, and whether it is the
    default that a `BackgroundCalibration` should replace."""
    mode = os.environ.get(MODE_ENV, "")
    weights = sum(p.weight.numel() * p.weight.element_size() for p in model.products())
    if device.type != "cpu" or mode == "off" or (weights < MIN_WEIGHT_BYTES and mode != "always"):
        return UNMEASURED, False
    path = path_for(model)
    kept = read(path)
    if kept is not None:
        return kept, False
    if mode == "now":
        found = measure(model)
        write(path, found)
        return found, False
    return default_calibration(model.products()), True


def read(path: Path) -> Calibration | None:
    """The calibration kept at `path` (`path_for`), if there is one of this version."""
    try:
        data = json.loads(path.read_text())
        return Calibration.from_json(data) if data.get("version") == VERSION else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(path: Path, found: Calibration) -> None:
    """Keep `found` at `path` for the next loads (atomically; a read-only cache keeps nothing)."""
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(json.dumps({"version": VERSION, **asdict(found)}, indent=1) + "\n")
        temp.replace(path)
    except OSError:
        temp.unlink(missing_ok=True)


def path_for(model: Transformer) -> Path:
    """Where this machine's calibration for `model` is kept, named by its products' shapes and the kernels
    they can run as a load attaches them, before the calibration drops the ones it does not use (the
    checkpoint's blocks, the 4-bit copies), and the decoding attention installed (a load installs it first):
    a load that builds the model again reads what the measurement wrote."""
    from engine.loading.gguf_base import cache_root

    shapes = ",".join(sorted({p.shape_key + "|" + ",".join(p.available) + (p.blocks.kind if p.blocks else "")
                              + (p.int4.backend if p.int4 else "") for p in model.products()}))
    return cache_root() / "calibration" / f"{machine_key(shapes, row_attention.backend())[:24]}.json"


def machine_key(*parts: str, files: Sequence[Path] = ()) -> str:
    """A hex digest of `files` (path, size and modification time), this machine (architecture, CPU model,
    torch's threads and version) and `parts`: what a record of this machine's kernels on disk is named by
    (the calibration, the prepared weights, documents' keys)."""
    stamps = [f"{f.resolve()}|{stat.st_size}|{stat.st_mtime_ns}" for f in files for stat in (f.stat(),)]
    what = "|".join([*stamps, platform.machine(), cpu_name(), str(torch.get_num_threads()), torch.__version__, *parts])
    return hashlib.sha256(what.encode()).hexdigest()


@cache
def all_cpu_flags() -> frozenset[str]:
    """/proc/cpuinfo's flags of this CPU (none where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            line = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return frozenset()
    return frozenset(line.partition(":")[2].split())


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        return platform.processor()


def default_calibration(products: list[FusedProjections]) -> Calibration:
    """The kernels a load runs before this machine is measured (the module's docstring says why)."""
    exact = default_kernels(torch.device("cpu"))
    decoding = next((k for k in ((BF16, HALF) if packs_bfloat16() else (HALF, BF16))
                     if _keeps_rows_apart(products, k)), None)
    table = (decoding,) * MAX_TABLE_ROWS if decoding is not None else exact
    mixed = table if decoding == BF16 else exact  # bfloat16 costs about the same at 1-16 rows; float16 does not
    shapes = {p.shape_key for p in products}
    return Calibration({s: table for s in shapes}, {s: exact for s in shapes}, DEFAULT_ROW_COST, LINEAR, mixed)


def _keeps_rows_apart(products: list[FusedProjections], kernel: Kernel) -> bool:
    """`calibrate.row_invariant` for a reduced-precision kernel, its copies made for one product of each
    shape only (and dropped after)."""
    first: dict[str, FusedProjections] = {}
    for p in products:
        first.setdefault(p.shape_key, p)
    saved = [state(p) for p in first.values()]
    try:
        for p in first.values():
            p.set_kernels((kernel,) * MAX_TABLE_ROWS)
        return row_invariant(list(first.values()), kernel)
    finally:
        for p, kept in zip(first.values(), saved):
            put(p, kept)


def state(p: FusedProjections) -> State:
    """What a calibration changes in a product: its kernel tables and the reduced-precision copies."""
    return p.kernels, p.wide, p.mixed, p.steady_rows, p.low, p.merged


def put(p: FusedProjections, kept: State) -> None:
    p.kernels, p.wide, p.mixed, p.steady_rows, p.low, p.merged = kept


def pristine(p: FusedProjections) -> State:
    """A product's state as fusing leaves it, where a measurement starts."""
    return default_kernels(p.weight.device), LINEAR, (), 0, {}, {}


def drop_unused_blocks(products: list[FusedProjections]) -> None:
    """Blocks no call runs: their memory and their runtime sessions go."""
    for product in products:
        if BLOCKS not in (*product.kernels, *product.mixed, product.wide):
            product.blocks = None
        if INT4 not in (*product.kernels, *product.mixed, product.wide):
            product.int4 = None


class BackgroundCalibration:
    """The measurement of this machine's calibration for `model`, which serves meanwhile with the default
    one: `step` runs one piece on the thread that runs the model, with the products in the measurement's own
    state, and puts the serving state back after it; the last piece applies what was measured (`half`:
    whether reduced-precision kernels may serve, `engine.loading.devices.engine_choice`), keeps it on disk and
    calls `then` with it (the prepared weights' writer)."""

    def __init__(self, model: Transformer, half: bool,
                 then: Callable[[Calibration], object] | None = None) -> None:
        self.model, self.half, self.then = model, half, then
        self.path = path_for(model)  # named before the measurement drops kernels (`path_for`)
        self.pieces = 0
        self._steps: Steps[Calibration] = measuring(model)
        self._state = [pristine(p) for p in model.products()]

    def step(self) -> Calibration | None:
        """One piece of the measurement; after the last, the calibration, applied to the model."""
        products = self.model.products()
        serving = [state(p) for p in products]
        found: Calibration | None = None
        try:
            for p, kept in zip(products, self._state):
                put(p, kept)
            next(self._steps)
        except StopIteration as done:
            found = done.value
        finally:
            self._state = [state(p) for p in products]
            for p, kept in zip(products, serving):
                put(p, kept)
            self.pieces += 1
        if found is None:
            return None
        self._state = []
        found.apply(products, half=self.half)
        drop_unused_blocks(products)
        write(self.path, found)
        if self.then is not None:
            self.then(found)
        return found
