"""DiffusionGemma behind `Engine.infill`, driven by transformers' own `DiffusionGemmaForBlockDiffusion.generate`,
on a tiny random checkpoint written by `save_pretrained`: each gap is one generation of the text before it."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest
from engine.families.registry import reading_suffix


@pytest.fixture(scope="module")
def gemma(tiny_block) -> Engine:
    return Engine.load(tiny_block("diffusion_gemma"), device="cpu")


def _generate(engine: Engine, prompt: list[int], n: int) -> list[int]:
    """transformers' generate, the first n new tokens up to the first end token, as the engine writes them."""
    out = engine.loaded.model.hf.generate(torch.tensor([prompt]), max_new_tokens=n)
    new = out.sequences[0, len(prompt) : len(prompt) + n].tolist()
    end = next((j for j, t in enumerate(new) if t in engine.special.end_ids), len(new))
    return new[:end] + [engine.special.eos_id] * (n - end)


def test_a_completion_is_the_models_own_generation(gemma: Engine) -> None:
    m, eos = gemma.special.mask_id, gemma.special.eos_id
    prompt = [gemma.special.bos_id] + gemma.tokenizer.encode("def add(a, b):\n    return")
    result = gemma.infill([InfillRequest(prompt + [m] * 11 + [eos])], DenoiseParams.fast().with_(seed=7))[0]
    with torch.random.fork_rng():
        torch.manual_seed(7)
        expected = _generate(gemma, prompt, 11)
    assert result.spans[0].token_ids == expected
    assert result.stats.forward_passes >= 2 and result.stats.new_tokens == sum(t != eos for t in expected)
    again = gemma.infill([InfillRequest(prompt + [m] * 11 + [eos])], DenoiseParams.fast().with_(seed=7))[0]
    assert again.canvas == result.canvas  # seeded: the random canvases are the same


def test_gaps_are_generated_in_order_each_reading_the_suffix_and_the_gaps_before(gemma: Engine) -> None:
    """With the family reading the suffix (a context block first; by default it reads the prefix only)."""
    gemma = Engine(dataclasses.replace(gemma.loaded, family=reading_suffix(gemma.loaded.family, True)))
    m, eos, bos = gemma.special.mask_id, gemma.special.eos_id, gemma.special.bos_id
    enc = gemma.tokenizer.encode
    first, middle, suffix = enc("a = "), enc("\nb = "), enc("\nprint(a)\n")
    canvas = [bos, *first, *[m] * 5, *middle, *[m] * 6, *suffix, eos]
    result = gemma.infill([InfillRequest(canvas)], DenoiseParams.fast().with_(seed=3))[0]
    with torch.random.fork_rng():
        torch.manual_seed(3)
        gap1 = _generate(gemma, [*suffix, eos, bos, *first], 5)
        written = gap1[: next((j for j, t in enumerate(gap1) if t == eos), 5)]
        gap2 = _generate(gemma, [*suffix, eos, bos, *first, *written, *middle], 6)
    assert [s.token_ids for s in result.spans] == [gap1, gap2]


def test_a_long_continuation_grows_its_gap_and_a_cancelled_request_writes_nothing(gemma: Engine) -> None:
    m, eos = gemma.special.mask_id, gemma.special.eos_id
    prompt = [gemma.special.bos_id] + gemma.tokenizer.encode("for i in range(")
    params = DenoiseParams.fast().with_(seed=1)
    grown = gemma.infill([InfillRequest(prompt + [m] * 2 + [eos], max_grow=6)], params)[0]
    with torch.random.fork_rng():
        torch.manual_seed(1)
        expected = _generate(gemma, prompt, 8)
    text = expected[: next((j for j, t in enumerate(expected) if t == eos), 8)]
    assert grown.spans[0].token_ids[: len(text)] == text and len(grown.spans[0].token_ids) == max(2, len(text))
    cancelled = gemma.infill([InfillRequest(prompt + [m] * 4 + [eos], cancel=lambda: True)], params)[0]
    assert cancelled.cancelled and cancelled.spans[0].token_ids == [m] * 4
