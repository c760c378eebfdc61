"""Block-diffusion families (SDAR, Fast-dLLM v2, LLaDA2.x) on tiny random checkpoints in their real layouts:
forward parity with transformers under the block-causal mask, the reference rule against the official
samplers (tests/engine/block_reference.py cites them), and exact block caching."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from block_reference import block_generate, block_mask, fast_dllm_generate, network, reference_model

from engine import DenoiseParams, Engine, InfillRequest, ModelLoadError
from engine.families.block_layout import row_order
from engine.families.registry import load, reading_suffix
from engine.models.layers import ForwardContext

FAMILIES = ("sdar", "fast_dllm", "llada2")


@pytest.fixture(scope="module")
def engines(tiny_block):
    return {family: Engine.load(tiny_block(family), device="cpu") for family in FAMILIES}


@pytest.mark.parametrize("family", FAMILIES)
def test_logits_match_transformers_under_the_block_causal_mask(family, tiny_block):
    folder = tiny_block(family)
    ours = load(folder, device="cpu").model
    ref = reference_model(folder)
    size = 4
    ids = torch.randint(0, ours.shape.vocab_size, (1, 22), generator=torch.Generator().manual_seed(3))
    allowed = block_mask(22, size) == 0
    with torch.no_grad():
        got = ours(ids, None, None, ForwardContext([None] * len(ours.model.layers), attn_mask=allowed))
        expected = ref(input_ids=ids, attention_mask=block_mask(22, size)).logits
        causal = ref(input_ids=ids).logits
    assert torch.allclose(got, expected, atol=1e-4, rtol=1e-4), (got - expected).abs().max()
    assert not torch.allclose(causal, expected, atol=1e-3)  # the block mask is not the causal one


def _prompt(engine: Engine, text: str) -> list[int]:
    return [engine.special.bos_id] + engine.tokenizer.encode(text)


SOURCE = "import os\nimport sys\n\n\ndef main(argv):\n    for name in argv:\n        print(name)\n"


def _fill(engine: Engine, prompt: list[int], gen: int, params: DenoiseParams) -> list[int]:
    """What the engine writes in a gap of `gen` masks after `prompt` (the text after it is EOS alone)."""
    m = engine.special.mask_id
    return engine.infill([InfillRequest(prompt + [m] * gen + [engine.special.eos_id])], params)[0].spans[0].token_ids


def _official(family: str, net, engine: Engine, prompt: list[int], gen: int, steps: int, threshold: float | None):
    """The family's official sampler (block_reference.py) over blocks of 4, or 16 with sub-blocks of 8."""
    m, stops = engine.special.mask_id, set(engine.special.end_ids)
    if family == "fast_dllm":
        return fast_dllm_generate(net, prompt, 96, 16, 8, 1.0 if threshold is None else threshold, m, stops)[:gen]
    return block_generate(net, prompt, gen, 4, steps, threshold, m, stops, within_length=family == "llada2")


@pytest.fixture(scope="module")
def nets(tiny_block):
    return {family: network(reference_model(tiny_block(family)), 16 if family == "fast_dllm" else 4)
            for family in FAMILIES}


# (prompt length, masks): prompts that end on a block boundary and at each offset inside a block (a partial
# first block), and gaps that end on one and inside one (a last block the official samplers pad with masks).
LENGTHS = {"sdar": [(n, g) for n in (8, 9, 10, 11) for g in (2, 3, 5, 6, 7, 8)],
           "fast_dllm": [(n, g) for n in (10, 16, 21, 32) for g in (5, 11, 22, 30)]}
LENGTHS["llada2"] = LENGTHS["sdar"]
THRESHOLDS = {"sdar": 0.5, "llada2": 0.5, "fast_dllm": 0.2}  # the threshold rule's, against the sampler's own


@pytest.mark.parametrize("family", FAMILIES)
def test_reference_rule_is_the_official_sampler_at_every_length(family, engines, nets):
    """SDAR's `block_diffusion_generate` (`low_confidence_static`, a step per token), LLaDA2's `generate`
    (threshold 0.95, `min(steps, gen_length)` steps per block) and Fast-dLLM v2's `batch_sample` (threshold
    1: one token a step, sub-blocks of 8, a block's first token from the previous block), as written in
    block_reference.py: the engine writes the same tokens for every prompt and gap length, the last block
    padded with masks as the official samplers pad it; and the threshold rule is the same sampler at the
    given threshold (SDAR's `low_confidence_dynamic`)."""
    engine, net = engines[family], nets[family]
    reference = 0.95 if family == "llada2" else None
    for n, gen in LENGTHS[family]:
        prompt = _ids(engine, n)
        expected = _official(family, net, engine, prompt, gen, 4, reference)
        got = _fill(engine, prompt, gen, DenoiseParams.reference())
        assert got[: len(expected)] == expected, (n, gen, got, expected)
        dynamic = _official(family, net, engine, prompt, gen, 4, THRESHOLDS[family])
        fast = _fill(engine, prompt, gen, DenoiseParams.fast(THRESHOLDS[family]))
        assert fast[: len(dynamic)] == dynamic, (n, gen, fast, dynamic)


@pytest.mark.parametrize("family", ("sdar", "llada2"))
def test_reference_rule_with_fewer_steps_than_tokens_in_a_block(family, engines, nets):
    """`DenoiseParams.reference(3)`: three steps per block of 4 commit 2, 1 and 1 tokens (SDAR's and LLaDA2's
    `get_num_transfer_tokens`; LLaDA2 runs 2 steps of 2 for a gap of 2 tokens). Prompts whose first block
    leaves a single mask are SDAR's `topk` quirk (block_reference.py) and left out."""
    engine, net = engines[family], nets[family]
    threshold = 0.95 if family == "llada2" else None
    for n, gen in [(n, g) for n, g in LENGTHS[family] if n % 4 != 3]:
        prompt = _ids(engine, n)
        expected = _official(family, net, engine, prompt, gen, 3, threshold)
        got = _fill(engine, prompt, gen, DenoiseParams.reference(3))
        assert got[: len(expected)] == expected, (n, gen, got, expected)


class _Token:
    """`engine.types.Lead`: the span starts with one given token (the text infill backs off the prefix)."""

    def __init__(self, token: int) -> None:
        self.token = token
        self.text = "?"

    def allowed(self, written) -> frozenset[int] | None:
        return None if written else frozenset({self.token})


@pytest.mark.parametrize("family", FAMILIES)
def test_a_lead_is_the_end_of_the_official_prompt(family, engines, nets):
    """A gap whose first token is its lead (infill's backed-off line break) writes what the official sampler
    writes after the prompt that ends with that token: the lead's step counts no step of the block's
    schedule (three steps of 2, 1 and 1 tokens here) and moves no block boundary."""
    engine, net = engines[family], nets[family]
    steps, threshold = (4, None) if family == "fast_dllm" else (3, 0.95 if family == "llada2" else None)
    cases = [(32, 11), (21, 5), (16, 9)] if family == "fast_dllm" else [(9, 5), (10, 6), (12, 7), (9, 2)]
    m, eos = engine.special.mask_id, engine.special.eos_id
    for n, gen in cases:
        prompt = _ids(engine, n)
        expected = _official(family, net, engine, prompt, gen, steps, threshold)
        canvas = prompt[:-1] + [m] * (gen + 1) + [eos]
        request = InfillRequest(canvas, span_leads=(_Token(prompt[-1]),))
        params = DenoiseParams.reference(None if family == "fast_dllm" else steps)
        got = engine.infill([request], params)[0].spans[0].token_ids
        assert got[0] == prompt[-1]
        assert got[1 : 1 + len(expected)] == expected, (n, gen, got, expected)


@pytest.mark.parametrize("family", FAMILIES)
def test_gaps_are_written_one_after_another_from_the_text_before_them(family, engines, nets):
    """In place, a gap is the official generation of its length from the text before it (the earlier gaps
    as written, up to their first end token) and the text after it is not read: two gaps ending inside a
    block each write what the sampler writes from their prefix alone."""
    engine, net = engines[family], nets[family]
    m, eos, stops = engine.special.mask_id, engine.special.eos_id, set(engine.special.end_ids)
    threshold = 0.95 if family == "llada2" else None
    first, between = _ids(engine, 10 if family == "fast_dllm" else 9), engine.tokenizer.encode("\nx = ")
    gap1, gap2 = (5, 6) if family == "fast_dllm" else (6, 3)
    canvas = first + [m] * gap1 + between + [m] * gap2 + engine.tokenizer.encode("\nprint(x)\n") + [eos]
    one, two = engine.infill([InfillRequest(canvas)], DenoiseParams.reference())[0].spans
    expected1 = _official(family, net, engine, first, gap1, 4, threshold)
    assert one.token_ids[: len(expected1)] == expected1, (one.token_ids, expected1)
    read = next((j for j, t in enumerate(one.token_ids) if t in stops), gap1)
    expected2 = _official(family, net, engine, first + one.token_ids[:read] + between, gap2, 4, threshold)
    assert two.token_ids[: len(expected2)] == expected2, (two.token_ids, expected2)


def _ids(engine: Engine, n: int) -> list[int]:
    """A prompt of exactly `n` ids: BOS and the start of a real file."""
    ids = _prompt(engine, SOURCE)
    assert len(ids) >= n
    return ids[:n]


def _canvases(engine: Engine) -> list[InfillRequest]:
    """A completion, a gap with text after it, two gaps, and a short gap that must grow."""
    m, eos = engine.special.mask_id, engine.special.eos_id
    enc = engine.tokenizer.encode
    bos = [engine.special.bos_id]
    return [
        InfillRequest(bos + enc("def f(x):\n    return") + [m] * 9 + [eos], doc_id="a"),
        InfillRequest(bos + enc("def f(x):\n") + [m] * 7 + enc("\n    return y\n") + [eos]),
        InfillRequest(bos + enc("a = ") + [m] * 5 + enc("\nb = ") + [m] * 6 + enc("\nprint(a)\n") + [eos]),
        InfillRequest(bos + enc("for i in") + [m] * 3 + [eos], max_grow=8),
    ]


def reading_the_suffix(engine: Engine) -> Engine:
    """The same model with its family reading the text after the last gap first, as a context block."""
    return Engine(dataclasses.replace(engine.loaded, family=reading_suffix(engine.loaded.family, True)))


@pytest.mark.parametrize("reads_suffix", (False, True))
@pytest.mark.parametrize("family", FAMILIES)
def test_block_cache_is_exact(family, reads_suffix, engines):
    """cache="fixed" (complete blocks cached, never recomputed) writes exactly what cache="none" writes,
    alone and batched, under both rules, and runs fewer positions; with and without the suffix read."""
    engine = reading_the_suffix(engines[family]) if reads_suffix else engines[family]
    requests = _canvases(engine)
    for params in (DenoiseParams.reference(), DenoiseParams.fast(0.3)):
        cold = [engine.infill([r], params.with_(cache="none"))[0] for r in requests]
        warm = [engine.infill([r], params.with_(cache="fixed"))[0] for r in requests]
        batched = engine.infill(requests, params.with_(cache="fixed"))
        for c, w, b in zip(cold, warm, batched):
            assert c.canvas == w.canvas == b.canvas
            assert engine.special.mask_id not in w.canvas
        assert sum(w.stats.positions for w in warm) < sum(c.stats.positions for c in cold)


def test_suffix_is_read_first_and_an_empty_one_not_at_all():
    ids = [1, 10, 11, 2, 2, 2, 20, 21, 0]  # BOS, prefix, three masks, suffix, EOS
    order = row_order(ids, [[3, 6]], 10, 2, frozenset({0}), reads_suffix=True).tolist()
    assert order == [3, 4, 5, 6, 7, 8, 0, 1, 2, -1]  # suffix + EOS first, then BOS, prefix, gap
    bare = [1, 10, 11, 2, 2, 0]
    assert row_order(bare, [[3, 5]], 6, 2, frozenset({0}), True).tolist() == [0, 1, 2, 3, 4, -1]
    assert row_order(ids, [[3, 6]], 9, 2, frozenset({0}), False).tolist()[6:] == [-1, -1, -1]
    done = [1, 10, 33, 0, 0, 20, 0]  # a finished gap is read up to its first end token
    assert row_order(done, [[2, 5]], 7, 2, frozenset({0}), False).tolist() == [0, 1, 2, -1, -1, -1, -1]


def test_document_cache_reuses_exact_blocks(engines):
    engine = engines["sdar"]
    m, eos = engine.special.mask_id, engine.special.eos_id
    first = [engine.special.bos_id] + engine.tokenizer.encode("import os\nimport sys\n\ndef main():\n    ")
    again = first + engine.tokenizer.encode("print")
    params = DenoiseParams.fast()
    engine.infill([InfillRequest(first + [m] * 8 + [eos], doc_id="doc")], params)
    warm = engine.infill([InfillRequest(again + [m] * 8 + [eos], doc_id="doc")], params)[0]
    cold = engine.infill([InfillRequest(again + [m] * 8 + [eos])], params)[0]
    assert warm.canvas == cold.canvas
    assert warm.stats.positions < cold.stats.positions


def test_block_size_override_and_unsupported_block_models(engines, tiny_block, tmp_path):
    engine = engines["sdar"]
    canvas = _canvases(engine)[0]
    eight = engine.infill([canvas], DenoiseParams.fast(0.3).with_(block=8, cache="none"))[0]
    assert eight.canvas == engine.infill([canvas], DenoiseParams.fast(0.3).with_(block=8))[0].canvas
    folder = tmp_path / "moe"
    folder.mkdir()
    cfg = json.loads((tiny_block("sdar") / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, "model_type": "sdar_moe"}))
    with pytest.raises(ModelLoadError, match="model_type 'sdar_moe'"):
        load(folder)


def test_by_default_the_suffix_is_not_read(engines):
    """The measured default (bench.block_suffix): a gap reads the text before it only, so a canvas with
    text after the gap writes what the same canvas without it writes; read as a context block, it counts."""
    engine = engines["llada2"]
    m, eos = engine.special.mask_id, engine.special.eos_id
    before = [engine.special.bos_id] + engine.tokenizer.encode("def area(w, h):\n    return")
    after = engine.tokenizer.encode("\n\n\nprint(area(2, 3))\n")
    params = DenoiseParams.fast()
    bare, with_suffix = (engine.infill([InfillRequest(before + [m] * 8 + tail + [eos])], params)[0].spans[0]
                         for tail in ([], after))
    assert bare.token_ids == with_suffix.token_ids
    reading = reading_the_suffix(engine).infill([InfillRequest(before + [m] * 8 + after + [eos])], params)[0]
    assert reading.spans[0].token_ids != bare.token_ids


@pytest.mark.parametrize("family", FAMILIES)
def test_int8_weights_swap_the_fused_projections_and_leave_the_experts(family, engines, tiny_block):
    """dtype int8 (`engine.loading.quantize`) swaps every block's o_proj and fused gate/up (LLaDA2's dense layer's)
    for int8 products; a mixture's experts stay float32; the model still completes a canvas."""
    from engine.loading.quantize import Int8Projections

    engine = Engine.load(tiny_block(family), device="cpu", dtype="int8")
    layers = engine.loaded.model.model.layers
    assert all(isinstance(block.self_attn.out, Int8Projections) for block in layers)
    dense = [block.mlp for block in layers if hasattr(block.mlp, "gate_up")]
    assert dense and all(isinstance(mlp.gate_up, Int8Projections) for mlp in dense)
    assert len(dense) == (1 if family == "llada2" else len(layers))
    out = engine.infill([_canvases(engine)[0]], DenoiseParams.fast())[0]
    assert engine.special.mask_id not in out.canvas


def test_growth_keeps_every_row_s_pads():
    """A row's pads (after its canvas) survive another row's growth, and move with their own row's text."""
    from engine.denoise.canvas_batch import CanvasBatch

    m = 2
    batch = CanvasBatch.build([[1, 5, m, m, 6, 0], [1, m, 7, 0]], [8, 8], m, 0, "cpu")
    batch.widen(9)
    batch.x[0, 6:9] = torch.tensor([m, 44, m])
    batch.rows[0].pads = 3
    batch.grow(1, 0, 2)
    assert batch.x[0, :9].tolist() == [1, 5, m, m, 6, 0, m, 44, m]
    assert batch.row_ids(1) == [1, m, m, m, 7, 0] and batch.rows[1].spans == [[1, 4]]
    batch.grow(0, 0, 1)
    assert batch.x[0].tolist() == [1, 5, m, m, m, 6, 0, m, 44, m]
    assert batch.row_ids(0) == [1, 5, m, m, m, 6, 0] and int(batch.masked[0].sum()) == 3
