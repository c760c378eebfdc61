"""What differs between two sequences (the tokens of an edit's lines, the lines of two versions of a file), as
the runs difflib's opcodes call not "equal", at a cost that stays about linear whatever the input.

difflib's `SequenceMatcher` (without autojunk, which would leave tokens as common as `(` out of the match)
costs about the product of the two lengths, and more on repetitive input: 500 tokens of `x = 1` against as
many of `y = 2` take 0.35 s, 1,300 take 19 s, and two versions of a 100,000-line file do not finish. So a
pair whose product is over `SMALL` (a few milliseconds at most, on any input) is cut down first: its equal
head and tail are stripped, and what is left, when still over `SMALL`, is split at the elements that occur
once on each side, in the same order on both (patience diff's anchors), each piece between them handled the
same way. A large piece with no such element is one run. Pairs within `SMALL` go to `SequenceMatcher` whole,
so small inputs (every edit typed by hand) get exactly difflib's runs.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Hashable, Sequence

SMALL = 128 * 128
DEPTH = 8  # nested splits at anchors; a piece still over SMALL below them is one run

Run = tuple[int, int, int, int]
"""`a[i1:i2]` is replaced by `b[j1:j2]` (either may be empty: an insertion or a deletion)."""


def changed_runs(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Run]:
    """The runs of `a` and `b` that differ, in order."""
    out: list[Run] = []
    _runs(a, b, (0, len(a), 0, len(b)), DEPTH, out)
    return out


def _runs(a: Sequence[Hashable], b: Sequence[Hashable], span: Run, depth: int, out: list[Run]) -> None:
    lo_a, hi_a, lo_b, hi_b = span
    if (hi_a - lo_a) * (hi_b - lo_b) > SMALL:
        while lo_a < hi_a and lo_b < hi_b and a[lo_a] == b[lo_b]:
            lo_a, lo_b = lo_a + 1, lo_b + 1
        while lo_a < hi_a and lo_b < hi_b and a[hi_a - 1] == b[hi_b - 1]:
            hi_a, hi_b = hi_a - 1, hi_b - 1
    if lo_a == hi_a and lo_b == hi_b:
        return
    if (hi_a - lo_a) * (hi_b - lo_b) <= SMALL:
        matcher = difflib.SequenceMatcher(None, a[lo_a:hi_a], b[lo_b:hi_b], autojunk=False)
        out.extend((lo_a + i1, lo_a + i2, lo_b + j1, lo_b + j2)
                   for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
        return
    anchors = _anchors(a, b, (lo_a, hi_a, lo_b, hi_b)) if depth > 0 else []
    if not anchors:
        out.append((lo_a, hi_a, lo_b, hi_b))
        return
    for i, j in anchors:
        _runs(a, b, (lo_a, i, lo_b, j), depth - 1, out)
        lo_a, lo_b = i + 1, j + 1
    _runs(a, b, (lo_a, hi_a, lo_b, hi_b), depth - 1, out)


def _anchors(a: Sequence[Hashable], b: Sequence[Hashable], span: Run) -> list[tuple[int, int]]:
    """(i, j) with `a[i] == b[j]` an element that occurs once in each side of `span`: the longest chain of
    such pairs that rises on both sides."""
    lo_a, hi_a, lo_b, hi_b = span
    once = Counter(a[lo_a:hi_a])
    where: dict[Hashable, int] = {}
    for j in range(lo_b, hi_b):
        if once[b[j]] == 1:
            where[b[j]] = -1 if b[j] in where else j
    pairs = [(i, where[a[i]]) for i in range(lo_a, hi_a) if where.get(a[i], -1) >= 0]
    tails: list[int] = []  # per chain length, the pair ending the chain with the lowest j
    tail_js: list[int] = []
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        at = bisect.bisect_left(tail_js, j)
        back[k] = tails[at - 1] if at else -1
        if at == len(tails):
            tails.append(k)
            tail_js.append(j)
        else:
            tails[at], tail_js[at] = k, j
    chain = []
    k = tails[-1] if tails else -1
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    return chain[::-1]
