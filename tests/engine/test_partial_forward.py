"""Cached steps: which positions a partial forward runs, and the K/V they leave behind."""

from __future__ import annotations

import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest
from engine.denoise.canvas_batch import query_positions
from tests.support.checkpoints import layer0_keys


@pytest.fixture(scope="module")
def dream(tiny_dream) -> Engine:
    return Engine.load(tiny_dream, device="cpu")


@pytest.mark.parametrize("name", ["tiny_dream", "tiny_llada"])
def test_logits_at_equal_full_logits_at_those_positions(request, name):
    model = Engine.load(request.getfixturevalue(name), device="cpu").loaded.model
    ids = torch.randint(3, model.shape.vocab_size, (2, 17))
    rows, cols = torch.tensor([0, 1, 1, 0]), torch.tensor([16, 0, 9, 3])
    with torch.inference_mode():
        full = model(ids)
        picked = model(ids, logits_at=(rows, cols))
    assert picked.shape == (4, model.shape.vocab_size)
    assert torch.allclose(picked, full[rows, cols], atol=1e-5)


def test_query_positions_pad_short_rows_with_their_first_position():
    need = torch.tensor([[0, 1, 0, 1, 1], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    assert query_positions(need).tolist() == [[1, 3, 4], [0, 0, 0], [0, 0, 0]]


def test_committed_tokens_are_rerun_once_and_the_cache_says_what_it_holds(dream):
    """Between refreshes a step reruns the tokens committed in the step before. So when the loop ends,
    the cache holds K/V computed from the final token everywhere except at the last step's commits, and
    its record of ids says exactly where. Layer-0 keys depend on (token, position) only, so they are
    checked exactly."""
    sp, tok = dream.special, dream.tokenizer
    ids = [sp.bos_id] + tok.encode("def area(w, h):\n    return ") + [sp.mask_id] * 9 + tok.encode("\n") + [sp.eos_id]
    params = DenoiseParams.fast(threshold=1.0).with_(fill_after_eos=False)  # one commit per step
    result = dream.infill([InfillRequest(ids, doc_id="d")], params)[0]
    assert result.stats.forward_passes == 9
    kept = dream.doc_cache.get("d")
    assert kept is not None and len(kept.ids) == len(result.canvas)
    differs = [i for i, (a, b) in enumerate(zip(kept.ids, result.canvas)) if a != b]
    assert len(differs) == 1 and differs[0] in range(ids.index(sp.mask_id), ids.index(sp.mask_id) + 9)
    agree = torch.tensor([a == b for a, b in zip(kept.ids, result.canvas)])
    fresh = layer0_keys(dream.loaded.model, result.canvas)
    assert torch.allclose(kept.layers[0].k[0][:, agree], fresh[:, agree], atol=1e-5)
    assert not torch.allclose(kept.layers[0].k[0][:, ~agree], fresh[:, ~agree], atol=1e-3)


def left_to_right_greedy(model, ids: list[int], mask_id: int) -> list[int]:
    """Fill masks one per step, leftmost first, with the argmax of a full forward (Dream's shifted logits)."""
    x = torch.tensor([ids])
    with torch.inference_mode():
        while bool((x == mask_id).any()):
            pos = int((x[0] == mask_id).nonzero()[0])
            logits = model(x)[0, pos - 1]
            logits[mask_id] = float("-inf")
            x[0, pos] = int(logits.argmax())
    return x[0].tolist()


@pytest.mark.parametrize("cache", ["none", "fixed"])
def test_block_of_one_decodes_left_to_right(dream, cache):
    """block=1 with one commit per step is greedy left-to-right decoding, exactly, without the cache or
    with it refreshed every step."""
    sp, tok = dream.special, dream.tokenizer
    ids = [sp.bos_id] + tok.encode("def area(w, h):\n    return ") + [sp.mask_id] * 7 + tok.encode("\n") + [sp.eos_id]
    params = DenoiseParams.fast(threshold=1.0).with_(fill_after_eos=False, block=1, cache=cache, refresh_every=1)
    result = dream.infill([InfillRequest(ids)], params)[0]
    assert result.canvas == left_to_right_greedy(dream.loaded.model, ids, sp.mask_id)
    assert result.stats.forward_passes == 7


def test_block_needs_the_threshold_rule():
    with pytest.raises(ValueError, match="block needs the threshold rule"):
        DenoiseParams.reference().with_(block=4)


def test_a_stop_token_ends_its_span(dream):
    """Decoding left to right, a span whose stop set holds the token it committed at step k+1 ends
    there: the rest are end tokens and the span does not grow; a span without stops is filled."""
    sp, tok = dream.special, dream.tokenizer
    ids = [sp.bos_id] + tok.encode("def area(w, h):\n    return ") + [sp.mask_id] * 8 + tok.encode("\n")
    ids += [sp.mask_id] * 8 + [sp.eos_id]
    params = DenoiseParams.fast(threshold=1.0).with_(block=1)
    free = dream.infill([InfillRequest(ids, max_grow=8)], params)[0]
    first = free.spans[0].token_ids
    k = next(i for i in range(2, 8) if first[i] not in first[:i] and first[i] not in sp.end_ids)
    stopped = dream.infill([InfillRequest(ids, max_grow=8, span_stops=(frozenset({first[k]}),))], params)[0]
    assert stopped.spans[0].token_ids == first[: k + 1] + [sp.eos_id] * (7 - k)
    assert sp.mask_id not in stopped.spans[1].token_ids
    assert len(stopped.canvas) == len(free.canvas)


def test_near_covering_the_canvas_equals_no_cache(dream):
    """Fixed text within `near` of a span reruns with it every step; when that covers the whole canvas
    every cached step sees fresh K/V everywhere, which is the uncached loop exactly."""
    sp, tok = dream.special, dream.tokenizer
    ids = [sp.bos_id] + tok.encode("def area(w, h):\n    return ") + [sp.mask_id] * 10 + tok.encode("\n")
    ids += tok.encode("print(area(2, 3))\n") + [sp.mask_id] * 6 + [sp.eos_id]
    params = DenoiseParams.fast(threshold=1.0).with_(fill_after_eos=False)
    uncached = dream.infill([InfillRequest(ids)], params.with_(cache="none"))[0]
    covered = dream.infill([InfillRequest(ids)], params.with_(near=len(ids)))[0]
    assert covered.canvas == uncached.canvas
