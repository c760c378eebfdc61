"""How far a left-to-right family drafts, decided from what rows cost on this device.

Verified drafting (`policies.speculate`) writes exactly what one-token-per-step decoding writes; drafts
only change how many tokens a step keeps, and every draft costs a query row in the step that verifies it
(and a mask row in the step that proposed it, for drafts read off mask rows). On a GPU rows are nearly
free, so the family drafts as far as its trained lookahead. On a CPU a forward over 8-16 rows costs
1.5-3x one over a single row (`engine.kernels.calibration.Calibration.row_cost`), so drafting pays only when the drafts
are usually right.

`DraftPolicy` keeps how often drafts were kept (all requests of the engine), per place in a span's run of
drafts: p_i, how often the i-th draft was kept when every draft before it was. Drafts come in runs (a
copied line is right to its end or wrong from its first token), so a second draft after a kept first one
is kept far more often than a first one is. Before each step it picks the plan with the most expected
tokens per unit of cost, a run of d drafts giving p_1 + p_1 p_2 + ... + p_1 ... p_d tokens:
- `lookahead` b: mask rows per span a step reads. b > 1 drafts from mask rows: about 2b - 1 rows a step
  (b mask rows plus the b - 1 drafts they proposed last step) for the tokens of a run of b - 1 drafts;
- `most` d: drafts per span. With b = 1 drafts only come from copies of earlier text (prompt lookup):
  1 + d rows for the tokens of a run of d drafts.
Between plans worth the same, the longer lookahead wins (its steps also take lookup copies).
Without a measured row cost (a GPU, a model small enough to stay in cache) it drafts as far as the
family's lookahead, as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

PRIOR_DRAFTED = 20  # the prior counts as this many drafts seen...
PRIOR_KEPT = 0.7  # ...of which this fraction was kept


@dataclass(frozen=True)
class Plan:
    lookahead: int  # masks per span a step may propose for
    most: int  # drafts per span


@dataclass
class DraftPolicy:
    row_cost: tuple[float, ...]  # cost of a forward over k rows relative to one row, k = 1..len
    lookahead: int  # the family's trained lookahead
    reached: list[float] = field(init=False)  # [i]: runs whose draft i + 1 was verified after i kept ones
    kept: list[float] = field(init=False)  # [i]: of those, the runs that kept it
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        places = max(1, self.lookahead - 1)  # a plan drafts at most lookahead - 1
        self.reached = [float(PRIOR_DRAFTED)] * places
        self.kept = [PRIOR_DRAFTED * PRIOR_KEPT] * places

    @property
    def kept_rate(self) -> float:
        """How often a run's first draft is kept."""
        return self.kept[0] / self.reached[0]

    def observe(self, drafted: int, kept: int) -> None:
        """A step verified a span's run of `drafted` drafts and kept its first `kept`."""
        with self._lock:
            for i in range(min(drafted, kept + 1, len(self.reached))):
                self.reached[i] += 1
                self.kept[i] += i < kept

    def plan(self, kept_rate: float | None = None) -> Plan:
        """The plan for the drafts kept so far, or for every draft kept with probability `kept_rate`."""
        if not self.row_cost:
            return Plan(self.lookahead, self.lookahead - 1)
        rates = ([kept_rate] * len(self.reached) if kept_rate is not None
                 else [k / r for k, r in zip(self.kept, self.reached)])

        def tokens(drafts: int) -> float:
            total, run = 1.0, 1.0
            for i in range(drafts):
                run *= rates[min(i, len(rates) - 1)]
                total += run
            return total

        plans = [(tokens(d) / self.cost(1 + d), 1, Plan(1, d)) for d in range(self.lookahead)]
        plans += [(tokens(b - 1) / self.cost(2 * b - 1), b, Plan(b, b - 1)) for b in range(2, self.lookahead + 1)]
        return max(plans, key=lambda item: (round(item[0], 6), item[1]))[2]

    def cost(self, rows: int) -> float:
        """A forward over `rows` rows relative to one row (past the measured table: its last slope)."""
        table = self.row_cost
        if rows <= len(table):
            return table[rows - 1]
        slope = table[-1] - table[-2] if len(table) > 1 else 0.0
        return table[-1] + (rows - len(table)) * slope
