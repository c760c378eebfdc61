"""The kernels a decoding step runs, and switches that time the same step on other ones (`bench.step`'s
side-by-side columns)."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable

from engine import Engine
from engine.kernels import row_attention, row_ops
from engine.kernels.projections import INT4
from engine.loading.compiled import compiled_products
from engine.models import layers


class Compiled:
    """Within `with`, the engine's compiled int8 products (`engine.loading.compiled`); off outside."""

    def __init__(self, engine: Engine) -> None:
        self.products = compiled_products(engine.loaded.model)
        self.kernels = [p.compiled for p in self.products]
        self.__exit__()

    def __enter__(self) -> None:
        for p, kernel in zip(self.products, self.kernels):
            p.compiled = kernel

    def __exit__(self, *exc: object) -> None:
        for p in self.products:
            p.compiled = None


class TorchForms:
    """Within `with`, torch's decoding attention (`layers.attention_by_products`), norms and rotations in
    place of dcomplete's C kernels (`engine.kernels.row_attention`, `row_ops`)."""

    def __init__(self, engine: Engine) -> None:
        self.modules = [m for m in engine.loaded.model.modules() if isinstance(m, (layers.RMSNorm, layers.Attention))]
        self.attention, self.natives = row_attention.installed(), [m.native for m in self.modules]

    def __enter__(self) -> None:
        row_attention.install(None)
        for m in self.modules:
            m.native = None

    def __exit__(self, *exc: object) -> None:
        row_attention.install(self.attention)
        for m, native in zip(self.modules, self.natives):
            m.native = native


def native_kernels(engine: Engine) -> str:
    """Which of dcomplete's C kernels serve a step besides the products (empty where none)."""
    ops = any(isinstance(m, layers.RMSNorm) and m.native is not None for m in engine.loaded.model.modules())
    return " ".join(([row_attention.backend()] if row_attention.backend() != "torch" else [])
                    + ([row_ops.BACKEND] if ops else []))


def side_by_side(fn: Callable[[], object], other: Compiled | TorchForms, repeats: int) -> tuple[float, float]:
    """Median ms of `fn` as the engine runs it and within `other` (its other kernels), taking turns, each
    call after a warm-up call of the same kernels."""
    def timed() -> float:
        fn()
        started = time.perf_counter()
        fn()
        return (time.perf_counter() - started) * 1000

    def within() -> float:
        with other:
            return timed()

    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(timed())
        theirs.append(within())
    return statistics.median(ours), statistics.median(theirs)


def decoding_kernels(engine: Engine) -> dict[str, int]:
    """How many of the model's products run each kernel in a one-row decoding step; `int4` named by its
    code (torch's kernel, or `engine.kernels.tile_int4` on AMX tiles)."""
    names = [p.kernels[0] + (f" ({p.int4.backend})" if p.kernels[0] == INT4 and p.int4 else "")
             for p in engine.loaded.model.products()]
    return dict(Counter(names).most_common())
