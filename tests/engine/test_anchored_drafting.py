"""The anchored family's verified drafting: greedy and sampled, over float32 and bfloat16 keys, and spans
that end where their SpanEnd says."""

from __future__ import annotations

import pytest
import torch

from engine import DenoiseParams, InfillRequest
from tests.support.anchored_canvas import multi_spot


@pytest.mark.parametrize("threshold", [0.0, 0.5, 0.9])
@pytest.mark.usefixtures("float32_keys")
def test_verified_drafts_write_exactly_what_one_token_a_step_writes(anchored, threshold):
    """Drafts (from mask rows or copied from the canvas) are kept only when the committed rows agree, so
    greedy decoding with drafting equals decoding one token per span per step, with two spans and growth."""
    sp, tok = anchored.special, anchored.tokenizer
    request = InfillRequest(multi_spot(anchored), max_grow=16)
    one_a_step = anchored.infill([request], DenoiseParams.reference().with_(fill_after_eos=False))[0]
    drafted = anchored.infill([request], DenoiseParams(threshold=threshold, fill_after_eos=False))[0]
    assert drafted.canvas == one_a_step.canvas
    repeated = [sp.bos_id] + tok.encode("x = values[0]\ny = values[1]\nz = values[") + [sp.mask_id] * 8 + [sp.eos_id]
    assert anchored.infill([InfillRequest(repeated)], DenoiseParams(threshold=threshold))[0].canvas == \
        anchored.infill([InfillRequest(repeated)], DenoiseParams.reference())[0].canvas


@pytest.mark.usefixtures("float32_keys")
def test_verified_drafts_sample_what_one_token_a_step_samples(anchored):
    """With sampling, a draft is kept only where the token drawn for its position, from the logits of the
    text written before it, is the draft; each position's draw uses noise fixed for it (`gumbel_noise`), so
    drafting writes token for token what one-token-per-step sampling writes with the same seed, alone or
    beside other rows. Two rows of one canvas draw apart."""
    sp = anchored.special
    request = InfillRequest(multi_spot(anchored), max_grow=16)
    other = InfillRequest([sp.bos_id] + anchored.tokenizer.encode("x = 1\ny = ") + [sp.mask_id] * 3 + [sp.eos_id])
    unverified_differs = False
    for seed in range(4):
        sampled = DenoiseParams(threshold=0.0, temperature=0.7, seed=seed, fill_after_eos=False)
        one_a_step = anchored.infill([request], DenoiseParams.reference().with_(temperature=0.7, seed=seed,
                                                                               fill_after_eos=False))[0]
        alone, twin = anchored.infill([request, request], sampled)
        assert alone.canvas == one_a_step.canvas
        assert twin.canvas != alone.canvas
        assert anchored.infill([other, request], sampled)[1].canvas == twin.canvas  # second in its loop too
        unverified = anchored.infill([request], sampled.with_(verify=False))[0]
        unverified_differs |= unverified.canvas != one_a_step.canvas
    assert unverified_differs  # guesses committed unverified are not what one token a step draws


@pytest.mark.parametrize("threshold", [0.0, 0.9])
def test_keys_kept_in_bfloat16_keep_drafting_exact(anchored, monkeypatch, threshold):
    """With the cache in bfloat16 (any CPU: emulated where it is not native), verified drafting still
    writes what one token a step writes over the same cache, with two spans and growth: a decoding step's
    attention gives a row the same bits alone as among others in any dtype."""
    monkeypatch.setattr(anchored.loaded, "kv_dtype", torch.bfloat16)
    request = InfillRequest(multi_spot(anchored), max_grow=16)
    one_a_step = anchored.infill([request], DenoiseParams.reference().with_(cache="fixed", fill_after_eos=False))[0]
    drafted = anchored.infill([request], DenoiseParams(threshold=threshold, fill_after_eos=False))[0]
    assert drafted.canvas == one_a_step.canvas


class _EndAfter:
    """A SpanEnd that calls a span complete once it holds `count` tokens; records what it was shown."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.seen: list[list[int]] = []

    def reached(self, written) -> bool:
        self.seen.append(list(written))
        return len(written) >= self.count

    def may_end(self, written) -> bool:
        return True


@pytest.mark.parametrize("threshold", [0.0, 0.9])
def test_a_span_end_closes_the_span_and_keeps_what_was_written(anchored, threshold):
    """A span whose SpanEnd is reached stops: its masks become end tokens, it does not grow, and what it
    holds is what decoding without the end wrote up to there (verified tokens only, never drafts); the
    other spans of the canvas write on."""
    sp = anchored.special
    params = DenoiseParams(threshold=threshold, fill_after_eos=False, eos_penalty=50.0)
    canvas = multi_spot(anchored)
    free = anchored.infill([InfillRequest(canvas, max_grow=16)], params)[0]
    end = _EndAfter(3)
    ended = anchored.infill([InfillRequest(canvas, max_grow=16, span_ends=(end, None))], params)[0]
    first, second = ended.spans
    assert first.token_ids[:3] == free.spans[0].token_ids[:3]
    assert all(t == sp.eos_id for t in first.token_ids[3:]) and len(first.token_ids) >= 3
    assert sum(t not in sp.end_ids for t in second.token_ids) > 3
    assert all(sp.mask_id not in seen for seen in end.seen)
    alone = [sp.bos_id] + anchored.tokenizer.encode("def first(items):\n    return") + [sp.mask_id] * 12
    free_alone = anchored.infill([InfillRequest(alone, max_grow=16)], params)[0]
    ended_alone = anchored.infill([InfillRequest(alone, max_grow=16, span_ends=(_EndAfter(3),))], params)[0]
    assert ended_alone.stats.forward_passes < free_alone.stats.forward_passes
    never = _EndAfter(10**6)
    assert anchored.infill([InfillRequest(canvas, max_grow=16, span_ends=(never, never))], params)[0].canvas \
        == free.canvas
