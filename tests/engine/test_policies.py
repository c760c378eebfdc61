"""Commit policies on plain token lists: the end-token run."""

from __future__ import annotations

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
