"""A time limit on writing that never leaves a completion without its first line.

llama-server's `t_max_predict_ms` (its README, and `process_token` in tools/server/server-context.cpp) is
measured from the first generated token, and checked only when a token holding a line break is generated:
past the limit, generation stops at that line break. A slow prompt therefore never empties the answer, and
a client that asks for 250 ms still gets at least the rest of the line.

`LineDeadline` is that rule as an `engine.types.SpanEnd`: the engine asks it after every step with
the span's verified tokens, so the span ends (its masks become end tokens, the row finishes normally and
its result is kept) at the first line break written after the limit. The span's lead (text infill moved
out of the prefix, which may hold the prefix's own line break) is not generated text and is skipped. It
wraps the span's own `SpanEnd`, which still ends the span where post-processing would cut it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from infill.postprocess import decode


class LineDeadline:
    """`SpanEnd` for one span: `inner`'s rule, or `ms` milliseconds after the first written token, the next
    line break written after that. `clock` (seconds) is injectable for tests."""

    def __init__(self, ms: int, lead: str, tokenizer: Any, inner: Any | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ms, self.lead, self.tokenizer, self.inner, self.clock = ms, lead, tokenizer, inner, clock
        self.first: float | None = None  # when the first token was seen written
        self.breaks = 0  # line breaks of generated text seen at the last call

    def may_end(self, written: Sequence[int]) -> bool:
        return self.inner is None or self.inner.may_end(written)

    def reached(self, written: Sequence[int]) -> bool:
        if self.inner is not None and self.inner.reached(written):
            return True
        if not written:
            return False
        now = self.clock()
        if self.first is None:
            self.first = now
        text = decode(self.tokenizer, list(written))
        generated = text[len(self.lead):] if text.startswith(self.lead) else ""
        breaks, self.breaks = self.breaks, generated.count("\n")
        return self.breaks > breaks and (now - self.first) * 1000 > self.ms and self.may_end(written)
