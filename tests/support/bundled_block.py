"""A method body the bundled model writes as several statements, for tests of where a block's span stops.

What the model writes after a header depends on how this CPU's kernels round near-ties (after
`def __init__(self, x, y):` the Zen 4 EPYC wrote two assignments on two lines, the AMX Xeon one tuple
assignment), so the tests take the first of these headers whose fill is more than one line, and fail if
none is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import infill
from engine import Engine
from infill.user_settings import denoise_params

HEADERS = (
    "class Point:\n    def __init__(self, x, y):\n",
    "class Point:\n    def __init__(self, x, y, z):\n",
    "def fib(n):\n",
)

Fill = Callable[..., infill.FillResult]


def block_of_several_statements(engine: Engine) -> Fill:
    """`fill(**options)`: the block after the first of HEADERS whose body, filled with no other option than
    `max_grow=64`, is more than one line; filled with those `FillOptions` fields changed."""
    for text in HEADERS:
        spot = infill.plan_completion(text, len(text), language="python")
        assert spot is not None and spot.kind == "block"

        def fill(text: str = text, spot: infill.Spot = spot, **options: Any) -> infill.FillResult:
            (result,) = infill.fill_many(engine, [infill.FillJob(text, [spot], "python")], denoise_params(),
                                         options=infill.FillOptions(max_grow=64, **options))
            return result

        whole = fill()
        if whole.edits and whole.edits[0].new_text.count("\n") >= 1:
            return fill
    raise AssertionError("the bundled model wrote every header's body as one line")
