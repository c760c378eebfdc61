"""Where a span written left to right ends (`SpanEnd`): at the first prefix it calls complete, whatever a step
drafted past it, and not where it refuses an end (`may_end`): the engine writes on."""

from __future__ import annotations

import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest


@pytest.fixture(scope="module")
def anchored(tiny_anchored) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


class _NoEndBefore:
    """A SpanEnd that never calls a span complete and refuses it an end before `count` tokens; records
    what it was asked about."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.seen: list[list[int]] = []

    def reached(self, written) -> bool:
        return False

    def may_end(self, written) -> bool:
        self.seen.append(list(written))
        return len(written) >= self.count


@pytest.mark.parametrize("block", [0, 3])
def test_a_span_refused_an_end_writes_its_best_other_token_there(anchored, block):
    """Where the model would end a span (here a stop token, as a one-line span's line break) and its SpanEnd
    refuses, the span writes the best other token and goes on; the tokens before that point are what
    decoding without the refusal wrote, and drafting (`block` 0: the drafting policy's plan) writes what
    one token a step does."""
    sp = anchored.special
    params = DenoiseParams(block=block)
    canvas = [sp.bos_id] + anchored.tokenizer.encode("def first(items):\n    return") + [sp.mask_id] * 24
    free = anchored.infill([InfillRequest(canvas)], params)[0].spans[0].token_ids
    at = next(i for i, t in enumerate(free) if i >= 2 and t not in free[:i])  # the stop's first place
    stops = (frozenset({free[at]}),)
    stopped = anchored.infill([InfillRequest(canvas, span_stops=stops)], params)[0].spans[0].token_ids
    assert stopped[: at + 1] == free[: at + 1] and all(t in sp.end_ids for t in stopped[at + 1 :])
    refusing = _NoEndBefore(at + 4)
    held = anchored.infill([InfillRequest(canvas, span_stops=stops, span_ends=(refusing,))],
                           params)[0].spans[0].token_ids
    assert held[:at] == free[:at]
    assert not {*stops[0], *sp.end_ids} & set(held[: at + 4])
    assert free[:at] in refusing.seen
    stepwise = anchored.infill([InfillRequest(canvas, span_stops=stops, span_ends=(_NoEndBefore(at + 4),))],
                               DenoiseParams(block=1))[0].spans[0].token_ids
    assert held == stepwise


class _CompleteAt:
    """A SpanEnd that calls a span complete once it holds `count` tokens."""

    def __init__(self, count: int) -> None:
        self.count = count

    def reached(self, written) -> bool:
        return len(written) >= self.count

    def may_end(self, written) -> bool:
        return True


def test_a_step_that_verifies_several_tokens_ends_the_span_at_its_first_complete_prefix(anchored):
    """A step that keeps four tokens at once, of a span complete at two: the span holds two, as
    one-token-per-step decoding (which asks after every token) ends it; each prefix is asked once."""
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.families.commit import LeadingRunCommit

    sp = anchored.special
    asked = []

    class Recorded(_CompleteAt):
        def reached(self, written) -> bool:
            asked.append(list(written))
            return super().reached(written)

    canvas = [sp.bos_id, 5, 6] + [sp.mask_id] * 8
    batch = CanvasBatch.build([canvas], [0], sp.mask_id, sp.pad_id, "cpu", ends=[(Recorded(2),)])
    commit = LeadingRunCommit(anchored.loaded, DenoiseParams(block=1), sp)
    new_x = batch.x.clone()
    new_x[0, 3:4] = 7
    commit._end_spans(batch, new_x)
    assert new_x[0, 4:].tolist() == [sp.mask_id] * 7 and asked == [[7]]
    batch.x = new_x.clone()
    new_x[0, 4:7] = torch.tensor([8, 9, 10])
    commit._end_spans(batch, new_x)
    assert new_x[0, 3:].tolist() == [7, 8] + [sp.eos_id] * 6
    assert asked == [[7], [7, 8]]


@pytest.mark.parametrize("count", [2, 3, 5])
def test_a_step_that_keeps_several_drafts_ends_where_one_token_a_step_ends(anchored, count):
    sp = anchored.special
    canvas = [sp.bos_id] + anchored.tokenizer.encode("def first(items):\n    return") + [sp.mask_id] * 16
    request = InfillRequest(canvas, span_ends=(_CompleteAt(count),))
    stepwise = anchored.infill([request], DenoiseParams(block=1))[0].spans[0].token_ids
    drafted = anchored.infill([request], DenoiseParams(block=4))[0]
    assert drafted.spans[0].token_ids == stepwise
    assert all(t in sp.end_ids for t in stepwise[count:]) and not set(stepwise[:count]) & sp.end_ids
    assert drafted.stats.forward_passes < count + 1
