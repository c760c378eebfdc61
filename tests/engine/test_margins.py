"""A span's margins (engine.denoise.margins): how much the model wanted to change the text a span replaces,
and a rival text against it, checked against transformers' Llama with the adapter off."""

from __future__ import annotations

import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest
from tests.support.reference_llama import reference_llama


@pytest.fixture(scope="module")
def anchored(tiny_anchored, float32_keys_everywhere) -> Engine:
    """With float32 keys: margins are held to transformers' float32 Llama to 1e-3."""
    return Engine.load(tiny_anchored, device="cpu")


class _IdsReference:
    """`engine.types.Reference` over token ids (the text a span replaces, as ids)."""

    def __init__(self, ids: list[int]) -> None:
        self.ids, self.text = ids, ""

    def follows(self, written, token) -> bool:
        return len(written) < len(self.ids) and self.ids[len(written)] == token

    def alternatives(self, written) -> frozenset[int]:
        return frozenset(self.ids[len(written) : len(written) + 1])


class _SharedAt(_IdsReference):
    """An `_IdsReference` that also takes `shared` at position `at` (a shorter token another text starts
    with there too)."""

    def __init__(self, ids: list[int], at: int, shared: int) -> None:
        super().__init__(ids)
        self.at, self.shared = at, shared

    def follows(self, written, token) -> bool:
        return super().follows(written, token) or (len(written) == self.at and token == self.shared)

    def alternatives(self, written) -> frozenset[int]:
        extra = {self.shared} if len(written) == self.at else set()
        return super().alternatives(written) | extra


def test_a_span_s_margin_is_the_base_s_preference_where_it_leaves_its_reference(anchored):
    """With the adapter off the loop is the base's greedy decoding, so the margin can be checked against
    transformers' Llama: at the first written token that leaves the reference, log p(written) - log p(the
    reference's token), from the prefix plus the tokens both share."""
    sp, tok = anchored.special, anchored.tokenizer
    prefix = [sp.bos_id] + tok.encode("def area(w, h):\n    return")
    canvas = prefix + [sp.mask_id] * 6 + tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]
    params = DenoiseParams(adapter=False, fill_after_eos=False)
    written = anchored.infill([InfillRequest(canvas)], params)[0].spans[0].token_ids
    other = next(t for t in range(5, 50) if t not in (written[2], sp.eos_id, sp.pad_id, sp.mask_id))
    reference = [*written[:2], other, *written[3:]]
    kept, left = (anchored.infill([InfillRequest(canvas, span_refs=(_IdsReference(ids),))], params)[0].spans[0]
                  for ids in (written, reference))
    assert kept.margin is None and left.token_ids == written  # a reference never changes what is written
    with torch.no_grad():
        logits = reference_llama(anchored)(torch.tensor([prefix + written[:2]])).logits[0, -1]
    scores = torch.log_softmax(logits.float(), -1)
    assert left.margin == pytest.approx(float(scores[written[2]] - scores[other]), abs=1e-3)
    assert left.margin > 0
    # a rival text (a rule's proposal) is weighed against the reference at the same point
    third = next(t for t in range(50, 90) if t not in (written[2], other, sp.eos_id, sp.pad_id, sp.mask_id))
    rival = [*written[:2], third, *written[3:]]
    weighed = anchored.infill([InfillRequest(canvas, span_refs=(_IdsReference(reference),),
                                             span_rivals=(_IdsReference(rival),))], params)[0].spans[0]
    assert weighed.margin == pytest.approx(left.margin, abs=1e-5)
    assert weighed.rival_margin == pytest.approx(float(scores[third] - scores[other]), abs=1e-3)
    # a span that keeps its text throughout still weighs the rival where the rival parts from it
    kept_weighed = anchored.infill([InfillRequest(canvas, span_refs=(_IdsReference(written),),
                                                  span_rivals=(_IdsReference(rival),))], params)[0].spans[0]
    assert kept_weighed.margin is None
    assert kept_weighed.rival_margin == pytest.approx(float(scores[third] - scores[written[2]]), abs=1e-3)
    assert kept_weighed.rival_margin < 0
    # a token both texts take there decides nothing: left out of both sides, even when it is the likeliest
    shared = max((t for t in range(scores.shape[0]) if t not in (written[2], third, sp.eos_id, sp.pad_id,
                                                                   sp.mask_id)), key=lambda t: float(scores[t]))
    assert scores[shared] > scores[third]
    sharing = anchored.infill([InfillRequest(canvas, span_refs=(_SharedAt(written, 2, shared),),
                                             span_rivals=(_SharedAt(rival, 2, shared),))], params)[0].spans[0]
    assert sharing.rival_margin == pytest.approx(kept_weighed.rival_margin, abs=1e-5)
    # written text that leaves both texts where they still agree gives no verdict (not a tie of 0)
    agreeing = [*reference[:3], third, *reference[4:]]
    unweighed = anchored.infill([InfillRequest(canvas, span_refs=(_IdsReference(reference),),
                                               span_rivals=(_IdsReference(agreeing),))], params)[0].spans[0]
    assert unweighed.margin == pytest.approx(left.margin, abs=1e-5) and unweighed.rival_margin is None
    # with the adapter on, drafting or one token a step: the margin comes from the same logits
    one_a_step, drafted = (anchored.infill([InfillRequest(canvas, span_refs=(_IdsReference(reference),))], p)[0]
                           for p in (DenoiseParams.reference().with_(fill_after_eos=False),
                                     DenoiseParams(fill_after_eos=False)))
    assert drafted.spans[0].token_ids == one_a_step.spans[0].token_ids
    assert drafted.spans[0].margin is not None
    assert drafted.spans[0].margin == pytest.approx(one_a_step.spans[0].margin, abs=1e-5)
