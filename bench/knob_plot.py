"""The quality/speed knob plot of bench.quality --plot: single-line pass@1 and generated tokens/s against
the fast sampler's confidence threshold."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence

PLOT_THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95, 1.0)


def write_knob_plot(points: Sequence[dict], n_single: int, png: str) -> None:
    """Plot pass@1 (left axis) and tokens/s (right axis) against the threshold; the PNG is written to a
    temporary file in the same folder and renamed into place, so a failed run leaves no partial file."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    thresholds = [p["threshold"] for p in points]
    figure, quality_axis = pyplot.subplots(figsize=(6, 4))
    pass_percent = [100 * (p["pass_at_1_single"] or 0) for p in points]
    quality_axis.plot(thresholds, pass_percent, "o-", color="tab:blue")
    quality_axis.set_ylim(0, 100)
    quality_axis.set_xlabel("confidence threshold (fast sampler)")
    quality_axis.set_ylabel(f"HumanEval-infilling single-line pass@1 % (n={n_single})", color="tab:blue")
    speed_axis = quality_axis.twinx()
    speed_axis.plot(thresholds, [p["tokens_per_second"] or 0 for p in points], "s--", color="tab:orange")
    speed_axis.set_ylim(bottom=0)
    speed_axis.set_ylabel("generated tokens / s", color="tab:orange")
    quality_axis.set_title("dcomplete: quality/speed knob")
    figure.tight_layout()
    handle, temporary = tempfile.mkstemp(suffix=".png", dir=os.path.dirname(os.path.abspath(png)))
    os.close(handle)
    try:
        figure.savefig(temporary, dpi=120)
        os.replace(temporary, png)
    finally:
        pyplot.close(figure)
        if os.path.exists(temporary):
            os.unlink(temporary)
    print(f"plot written: {png}", file=sys.stderr, flush=True)
