"""The calibration record: which kernel each fused product runs at each row count on this machine, and what a
forward over k query rows costs against one row (which decides how far the sampler drafts).

`engine.loading.calibrate` measures it once per machine and model shape and keeps it on disk; a load applies
it to the model's products (`Calibration.apply`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.kernels.projections import COLUMNS, LINEAR, FusedProjections

EXACT = (LINEAR, COLUMNS)  # the kernels that keep a float32 model's results
VERSION = 14  # of the record on disk: a different version is measured again (14: bfloat16 products over
#               more than 1,024 columns run in column pieces, which keeps rows' bits on the Zen 4 EPYC)


@dataclass(frozen=True)
class Calibration:
    """`kernels[shape]`: the kernel per row count 1..MAX_TABLE_ROWS for a fused weight of that shape, and
    `exact[shape]` the same among the kernels that keep float32 results (`EXACT`); `row_cost[k - 1]`: a forward over k query rows
    against a short cache, relative to one row, with `kernels`."""

    kernels: dict[str, tuple[str, ...]]
    exact: dict[str, tuple[str, ...]]
    row_cost: tuple[float, ...]
    wide: str = LINEAR
    mixed: tuple[str, ...] = ()
    steady_rows: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Calibration:
        """The calibration `asdict` gave `data`."""
        return Calibration({k: tuple(v) for k, v in data["kernels"].items()},
                           {k: tuple(v) for k, v in data["exact"].items()}, tuple(data["row_cost"]),
                           data["wide"], tuple(data["mixed"]), dict(data.get("steady_rows", {})))

    def apply(self, products: Iterable[FusedProjections], half: bool) -> None:
        """Set every fused product's kernels (a model's `products()`); `half` False keeps the model exactly
        float32."""
        tables = self.kernels if half else self.exact
        for product in products:
            product.wide = self.wide if half or self.wide in EXACT else LINEAR
            product.steady_rows = self.steady_rows.get(product.shape_key, 0) if half else 0
            product.mixed = self.mixed if half else ()
            if product.shape_key in tables:
                product.set_kernels(tables[product.shape_key])


UNMEASURED = Calibration({}, {}, ())


class PendingCalibration(Protocol):
    """A calibration still being measured while the model serves with a default one
    (`engine.loading.tuning.BackgroundCalibration`)."""

    def step(self) -> Calibration | None:
        """Run one piece of the measurement on the thread that runs the model (between its requests); after
        the last piece, the calibration, already applied to the model."""
        ...
