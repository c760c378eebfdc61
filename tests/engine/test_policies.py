"""Commit policies on plain token lists: the end-token run, prompt-lookup drafts."""

from __future__ import annotations

import itertools
import random

from engine.denoise.policies import end_run, lookup_draft

M, E, PAD = 99, 0, 98  # mask, end of text, a second end id (pad)
ENDS = frozenset({E, PAD})


def test_a_committed_end_token_takes_the_end_proposals_before_it():
    before = [5, M, M, M, M, M]
    after = [5, M, M, M, M, E]  # the step committed an end token at the last position
    proposed = [M, 7, 8, E, PAD, E]  # positions 3 and 4 also propose end tokens, 1 and 2 do not
    assert end_run(after, before, proposed, ENDS, ENDS, E, M) == [5, M, M, E, E, E]


def test_masks_after_the_first_end_or_stop_token_become_end_tokens():
    before = [M, M, M, M]
    after = [4, E, M, M]
    assert end_run(after, before, [4, E, 6, 7], ENDS, ENDS, E, M) == [4, E, E, E]
    newline = 10
    after = [newline, M, 3, M]
    assert end_run(after, before, [newline, 2, 3, 2], ENDS, ENDS | {newline}, E, M) == [newline, E, 3, E]


def test_end_tokens_committed_earlier_do_not_pull_masks_in():
    before = [M, M, E, E]  # the end run was committed in an earlier step
    after = [M, 6, E, E]
    assert end_run(after, before, [E, 6, M, M], ENDS, ENDS, E, M) == [M, 6, E, E]


def test_lookup_drafts_copy_what_followed_the_same_tokens_earlier():
    mask = 99
    ids = [1, 5, 6, 7, 8, 9, 2, 5, 6, mask, mask, mask, 3]
    assert lookup_draft(ids, 7, 9, 3, mask) == [7, 8, 9]  # "5 6" was followed by "7 8 9"
    assert lookup_draft(ids, 7, 9, 2, mask) == [7, 8]
    assert lookup_draft([1, 2, 3, 4, mask, mask], 4, 4, 2, mask) == []  # nothing repeats


def _lookup_by_scan(ids: list[int], span_start: int, upto: int, limit: int, mask_id: int) -> list[int]:
    """`lookup_draft` as its definition reads, one position at a time (the tests' reference)."""
    written = ids[max(0, span_start - 4) : upto]
    for n in range(min(4, len(written)), 1, -1):
        tail = written[-n:]
        if mask_id in tail:
            continue
        for i in range(len(ids) - n - 1, -1, -1):
            if not (i + n >= span_start and i < upto) and ids[i : i + n] == tail:
                follow = list(itertools.takewhile(lambda t: t != mask_id, ids[i + n : i + n + limit]))
                if follow:
                    return follow
    return []


def test_lookup_drafts_find_what_a_scan_of_every_position_finds():
    """Random canvases over a few tokens (many repeats, tokens whose bytes straddle others' as the byte search
    sees them) with a span of masks: the same drafts as the position-by-position scan."""
    rng = random.Random(0)
    mask = 1 << 20
    for _ in range(3000):
        vocab = rng.choice([[1, 2, 3], [0, 256, 65536, 257], list(range(6))])
        ids = [rng.choice(vocab) for _ in range(rng.randint(2, 40))]
        start = rng.randint(0, len(ids))
        written = rng.randint(0, 4)
        ids[start:start] = [rng.choice(vocab) for _ in range(written)] + [mask] * rng.randint(0, 6)
        upto = start + written
        limit = rng.randint(1, 6)
        assert lookup_draft(ids, start, upto, limit, mask) == _lookup_by_scan(ids, start, upto, limit, mask), ids
