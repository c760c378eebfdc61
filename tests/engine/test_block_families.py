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


@pytest.mark.parametrize("family", ("sdar", "llada2"))
def test_reference_rule_is_the_official_block_sampler(family, engines, tiny_block):
    """SDAR's `block_diffusion_generate` (JetAstra/SDAR@c2041a8 generate.py: `low_confidence_static`,
    block 4, 4 steps; `low_confidence_dynamic` for the threshold rule) and LLaDA2's `generate`
    (modeling_llada2_moe.py, read in yks23/Information-Gain-Sampler@f1cb636: threshold 0.95, steps =
    block), as written in block_reference.py: the engine writes the same tokens, on prompts that end
    mid-block and on a block boundary, and with fewer steps than tokens in a block."""
    engine = engines[family]
    net = network(reference_model(tiny_block(family)), 4)
    threshold = 0.95 if family == "llada2" else None
    stops = set(engine.special.end_ids)
    for text, gen, steps in (("def add(a, b):\n    return", 13, None), ("x = 1\n", 14, None),
                             ("import os\nfor", 18, 2)):
        prompt = _prompt(engine, text)
        gen += -(len(prompt) + gen) % 4  # the official sampler fills whole blocks
        expected = block_generate(net, prompt, gen, 4, steps or 4, threshold, engine.special.mask_id, stops)
        canvas = prompt + [engine.special.mask_id] * gen + [engine.special.eos_id]
        got = engine.infill([InfillRequest(canvas)], DenoiseParams.reference(steps))[0].spans[0].token_ids
        assert got[: len(expected)] == expected, (text, got, expected)
        # The threshold rule is the same sampler at the given threshold (SDAR's `low_confidence_dynamic`).
        dynamic = block_generate(net, prompt, gen, 4, 4, 0.5, engine.special.mask_id, stops)
        fast = engine.infill([InfillRequest(canvas)], DenoiseParams.fast(0.5))[0].spans[0].token_ids
        assert fast[: len(dynamic)] == dynamic, (text, fast, dynamic)


@pytest.mark.parametrize("threshold", (1.0, 0.2))
def test_fast_dllm_rules_are_its_official_sampler(threshold, engines, tiny_block):
    """Fast-dLLM v2's `Fast_dLLM_QwenForCausalLM.generate` (the checkpoint's modeling.py, read in
    Satgoy152/DualDiffusion@1aeb3d4; the loop of NVlabs/Fast-dLLM v2/generation_functions.py, read in
    NikhilSDate/Fast-dLLM@734a60d), as written in block_reference.py, at its default threshold 1 (one
    token a step: the reference rule) and at a low one (the threshold rule): a block's first token from
    the previous block's last logit, sub-blocks of 8 inside blocks of 32 (here of 16: prompts end
    mid-block and on a block boundary)."""
    engine = engines["fast_dllm"]
    net = network(reference_model(tiny_block("fast_dllm")), 16)
    stops = set(engine.special.end_ids)
    params = DenoiseParams.reference() if threshold == 1.0 else DenoiseParams.fast(threshold).with_(cache="fixed")
    on_boundary = "import os\nimport sys\nimport re\n\n\ndef main(argv):\n    for name in argv:\n"
    for text, gen, cut in (("def add(a, b):\n    return", 20, None), (on_boundary, 30, 32),
                           ("class A:\n    pass\n", 12, None)):
        prompt = _prompt(engine, text)[:cut]
        gen += -(len(prompt) + gen) % 16
        expected = fast_dllm_generate(net, prompt, 64, 16, 8, threshold, engine.special.mask_id, stops)[:gen]
        canvas = prompt + [engine.special.mask_id] * gen + [engine.special.eos_id]
        got = engine.infill([InfillRequest(canvas)], params)[0].spans[0].token_ids
        assert got[: len(expected)] == expected, (text, got, expected)


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
