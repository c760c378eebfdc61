"""The denoising loop: exact reproduction of the official schedules, cache equivalence, invariants."""

from __future__ import annotations

import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest
from tests.support.checkpoints import layer0_keys


@pytest.fixture(scope="module")
def dream(tiny_dream) -> Engine:
    return Engine.load(tiny_dream, device="cpu")


@pytest.fixture(scope="module")
def llada(tiny_llada) -> Engine:
    return Engine.load(tiny_llada, device="cpu")


def canvas(engine: Engine, prefix: str, n: int, suffix: str, more: list[tuple[int, str]] = ()) -> list[int]:
    sp, tok = engine.special, engine.tokenizer
    ids = [sp.bos_id] + tok.encode(prefix) + [sp.mask_id] * n + tok.encode(suffix)
    for m, text in more:
        ids += [sp.mask_id] * m + tok.encode(text)
    return ids + [sp.eos_id]


# -- from-scratch reimplementations of the official samplers (temperature 0, no cache) -------------


def official_dream(model, x: torch.Tensor, mask_id: int, steps: int, eps: float = 1e-3) -> torch.Tensor:
    """Dream `diffusion_generate`, alg="maskgit_plus", batch of one, logits rolled right by one."""
    x = x.clone()
    timesteps = torch.linspace(1, eps, steps + 1)
    for i in range(steps):
        mask_index = x == mask_id
        logits = model(x)
        logits = torch.cat([logits[:, :1], logits[:, :-1]], dim=1)
        logits[..., mask_id] = float("-inf")  # dcomplete's one deviation: never propose the mask itself
        confidence, x0 = torch.softmax(logits[mask_index], dim=-1).max(dim=-1)
        t, s = timesteps[i], timesteps[i + 1]
        num_mask = mask_index.sum() / mask_index.shape[0]
        k = int(num_mask * (1 - s / t)) if i < steps - 1 else int(num_mask)
        full = torch.full(x.shape, float("-inf"))
        full[mask_index] = confidence
        if k > 0:
            _, idx = torch.topk(full, k)
            candidates = torch.full_like(x, mask_id)
            candidates[mask_index] = x0
            x[0, idx[0]] = candidates[0, idx[0]]
    return x


def official_llada(model, x: torch.Tensor, mask_id: int, steps: int) -> torch.Tensor:
    """LLaDA `generate` with one block covering the canvas, remasking="low_confidence", temperature 0."""
    x = x.clone()
    total = int((x == mask_id).sum())
    counts = [total // steps + (1 if i < total % steps else 0) for i in range(steps)]
    for i in range(steps):
        mask_index = x == mask_id
        logits = model(x)
        logits[..., mask_id] = float("-inf")
        x0 = logits.argmax(-1)
        p = torch.softmax(logits.to(torch.float64), dim=-1)
        x0_p = torch.gather(p, -1, x0[..., None]).squeeze(-1)
        x0 = torch.where(mask_index, x0, x)
        confidence = torch.where(mask_index, x0_p, torch.tensor(float("-inf"), dtype=torch.float64))
        _, select = torch.topk(confidence[0], k=counts[i])
        x[0, select] = x0[0, select]
    return x


@pytest.mark.parametrize("steps", [None, 5, 3])
def test_reference_rule_reproduces_official_dream_sampler(dream, steps):
    ids = canvas(dream, "def add(a, b):\n    return", 12, "\n\nprint(add(1, 2))\n")
    n = steps or 12
    expected = official_dream(dream.loaded.model, torch.tensor([ids]), dream.special.mask_id, n)
    got = dream.infill([InfillRequest(ids)], DenoiseParams.reference(steps=steps))[0]
    assert got.canvas == expected[0].tolist()


@pytest.mark.parametrize("steps", [None, 4])
def test_reference_rule_reproduces_official_llada_sampler(llada, steps):
    ids = canvas(llada, "for i in range(3):\n    ", 10, "\nprint('done')\n")
    expected = official_llada(llada.loaded.model, torch.tensor([ids]), llada.special.mask_id, steps or 10)
    got = llada.infill([InfillRequest(ids)], DenoiseParams.reference(steps=steps))[0]
    assert got.canvas == expected[0].tolist()


@pytest.mark.parametrize("name", ["dream", "llada"])
def test_cache_refreshed_every_step_equals_no_cache(request, name):
    engine = request.getfixturevalue(name)
    ids = canvas(engine, "class A:\n    def f(self):\n        ", 9, "\n\n", [(6, "\nx = A()\n")])
    plain = engine.infill([InfillRequest(ids)], DenoiseParams.reference())[0]
    cached = engine.infill([InfillRequest(ids)], DenoiseParams.reference().with_(cache="fixed", refresh_every=1))[0]
    assert cached.canvas == plain.canvas
    assert cached.stats.forward_passes == plain.stats.forward_passes


def test_threshold_rule_commits_every_step_and_keeps_fixed_text(dream):
    ids = canvas(dream, "import os\n\ndef main():\n    ", 10, "\n", [(5, "\n\nmain()\n"), (7, "\n")])
    masks = sum(1 for t in ids if t == dream.special.mask_id)
    for params in (DenoiseParams.fast(threshold=1.0), DenoiseParams.fast(), DenoiseParams(cache="none")):
        r = dream.infill([InfillRequest(ids)], params)[0]
        assert 1 <= r.stats.forward_passes <= masks  # at least one commit per forward
        assert dream.special.mask_id not in r.canvas
        fixed = [(i, t) for i, t in enumerate(ids) if t != dream.special.mask_id]
        assert all(r.canvas[i] == t for i, t in fixed)
        assert [s.end - s.start for s in r.spans] == [10, 5, 7]


def test_batch_of_different_lengths_matches_each_alone(dream):
    canvases = [
        canvas(dream, "def f():\n    return", 6, "\n"),
        canvas(dream, "values = [1, 2, 3]\nfor v in values:\n    ", 11, "\nprint('end')\n"),
        canvas(dream, "a", 3, ""),
    ]
    for params in (DenoiseParams.reference(), DenoiseParams.fast(), DenoiseParams(cache="none")):
        alone = [dream.infill([InfillRequest(c)], params)[0].canvas for c in canvases]
        together = [r.canvas for r in dream.infill([InfillRequest(c) for c in canvases], params)]
        assert together == alone


def test_cancel_stops_between_steps(dream):
    ids = canvas(dream, "x = ", 20, "\n")
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 3

    r = dream.infill([InfillRequest(ids)], DenoiseParams.reference(), cancel=cancel)[0]
    assert r.cancelled and r.stats.forward_passes == 3
    assert dream.special.mask_id in r.canvas


def test_span_without_end_token_grows(dream):
    ids = canvas(dream, "print(", 4, ")\n")
    r = dream.infill([InfillRequest(ids, max_grow=12)], DenoiseParams.fast())[0]
    span = r.spans[0]
    ends = dream.special.end_ids
    if any(t in ends for t in span.token_ids[:4]):
        assert span.end - span.start == 4
    else:
        assert span.end - span.start > 4
    first = ids.index(dream.special.mask_id)
    assert r.canvas[: span.start] == ids[:first]
    assert r.canvas[span.end :] == ids[first + 4 :]  # the fixed suffix is intact after growth
    assert len(r.canvas) == len(ids) + (span.end - span.start - 4)


def test_doc_cache_reuses_rerotated_suffix_keys(dream):
    """Layer-0 keys depend only on (token, position): the reused, re-rotated keys must equal fresh ones."""
    from engine.cache.doc_cache import DocKV, warm_layers

    model = dream.loaded.model
    before = canvas(dream, "import sys\n" * 6 + "def g():\n    ", 5, "\n" + "y = 2\n" * 8)
    after = canvas(dream, "import sys\n" * 2 + "import json\n" + "import sys\n" * 3 + "def g():\n    ", 5,
                   "\n" + "y = 2\n" * 8)
    r = dream.infill([InfillRequest(before, doc_id="doc")], DenoiseParams.fast())[0]
    kept = dream.doc_cache.get("doc")
    assert isinstance(kept, DocKV) and len(kept.ids) == len(r.canvas)
    warmed = warm_layers(kept, after, dream.special.mask_id, model)
    assert warmed is not None
    layers, edited = warmed
    fresh = layer0_keys(model, after)
    reused = torch.ones(len(after), dtype=torch.bool)
    reused[edited[0]] = False
    assert reused.sum() > len(after) // 2
    assert torch.allclose(layers[0].k[0][:, reused], fresh[:, reused], atol=1e-5)
    warm = dream.infill([InfillRequest(after, doc_id="doc")], DenoiseParams.fast())[0]
    assert dream.special.mask_id not in warm.canvas


def test_bad_canvases_are_refused(dream):
    with pytest.raises(ValueError, match="no mask"):
        dream.infill([InfillRequest([dream.special.bos_id, dream.special.eos_id])])
    with pytest.raises(ValueError, match="vocabulary"):
        dream.infill([InfillRequest([dream.special.mask_id, 10**7])])


def test_threshold_rule_advances_every_span_each_step(dream):
    """Even with a threshold nothing reaches, each span commits its best token every step."""
    one = canvas(dream, "x = ", 10, "\n")
    three = canvas(dream, "x = ", 10, "\n", [(10, "\ny = "), (6, "\n")])
    params = DenoiseParams.fast(threshold=1.0).with_(fill_after_eos=False)
    single = dream.infill([InfillRequest(one)], params)[0]
    multi = dream.infill([InfillRequest(three)], params)[0]
    assert single.stats.forward_passes == 10
    assert multi.stats.forward_passes == 10  # the longest span, not 26


def test_eos_penalty_keeps_end_tokens_out_of_spans(dream):
    ids = canvas(dream, "def f():\n    return", 12, "\n")
    ends = dream.special.end_ids
    r = dream.infill([InfillRequest(ids)], DenoiseParams.fast().with_(eos_penalty=1e4))[0]
    assert not any(t in ends for t in r.spans[0].token_ids)
    with pytest.raises(ValueError, match="eos_penalty"):
        DenoiseParams(eos_penalty=-1.0)
