"""The CPU fast paths: kernels chosen per row count, the adapter's LoRA folded into fused products, what
the calibration decides, and how far the sampler drafts from what rows cost."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, replace

import pytest
import torch
import torch.nn.functional as F

from engine import DenoiseParams, Engine, InfillRequest
from engine.denoise.drafting import DraftPolicy, Plan
from engine.kernels.calibration import UNMEASURED, Calibration
from engine.kernels.projections import (
    BF16,
    COLUMNS,
    HALF,
    KERNELS,
    LINEAR,
    LOW,
    MAX_TABLE_ROWS,
    MAX_WIDE_ROWS,
)
from engine.loading.calibrate import (
    _row_cost,
    _table,
    decode_cost,
    decoding_call,
    measure,
    row_invariant,
    run,
    steady_rows,
)
from engine.loading.tuning import calibration_for
from engine.models.anchored import GapAdapt
from engine.models.layers import DOWN, GATE_UP, OUT, QKV, Projections


@pytest.fixture(scope="module")
def anchored(tiny_anchored) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


def _canvas(engine: Engine) -> list[int]:
    sp, tok = engine.special, engine.tokenizer
    return ([sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 6
            + tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id])


def _unfused(model):
    """A copy of `model` whose blocks run their projections one by one, the adapter's LoRA applied per
    projection (as in training), and whose head is the plain linear layer."""
    clone = copy.deepcopy(model)
    for block in clone.model.layers:
        attn, mlp = block.self_attn, block.mlp
        attn.qkv = Projections(QKV, (attn.q_proj, attn.k_proj, attn.v_proj))
        attn.out = Projections(OUT, (attn.o_proj,))
        mlp.gate_up = Projections(GATE_UP, (mlp.gate_proj, mlp.up_proj))
        mlp.down = Projections(DOWN, (mlp.down_proj,))
    clone.head = None
    return clone


def _restore(products, saved) -> None:
    """Put back the (kernels, wide, mixed) a measurement changed (it leaves its own choice behind)."""
    for p, (kernels, wide, mixed) in zip(products, saved):
        p.wide, p.mixed = wide, mixed
        p.set_kernels(kernels)


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_computes_the_unfused_projections(anchored, kernel):
    """At every row count a kernel is chosen for, each fused product with the LoRA folded in gives what the
    projections give one by one with the LoRA applied per projection (as in training), on gap rows and on
    fixed-text rows: float32 kernels to float tolerance, float16 and bfloat16 to their precision."""
    model = anchored.loaded.model
    reference = _unfused(model)
    fused = copy.deepcopy(model)
    for p in fused.products():
        p.set_kernels((kernel,) * MAX_TABLE_ROWS)
    tolerance = {HALF: 2e-2, BF16: 8e-2}.get(kernel, 1e-5)
    for rows in (1, 2, 5, 16):
        for gap in (torch.ones(1, rows, dtype=torch.bool), torch.arange(rows)[None] % 2 == 0):
            adapt = GapAdapt(model.adapter, gap, torch.ones(1, 1, rows, rows, dtype=torch.bool), None)
            for layer, (ours, theirs) in enumerate(zip(fused.model.layers, reference.model.layers)):
                for name in ("qkv", "out", "gate_up"):
                    group = getattr(ours.self_attn, name, None) or getattr(ours.mlp, name)
                    plain = getattr(theirs.self_attn, name, None) or getattr(theirs.mlp, name)
                    x = torch.randn(1, rows, model.shape.hidden_size)
                    with torch.inference_mode():
                        for got, expected in zip(group(x, adapt, layer), plain(x, adapt, layer)):
                            assert torch.allclose(got, expected, atol=tolerance, rtol=tolerance), (kernel, rows, name)
            h = torch.randn(1, rows, model.shape.hidden_size)
            assert torch.allclose(fused.project(h), reference.project(h), atol=tolerance, rtol=tolerance)


def test_the_bfloat16_kernel_gives_the_plain_copy_s_bits_and_saves_plainly(anchored):
    """Where oneDNN runs bfloat16, the copy is packed once into its blocked layout (no reorder per call):
    up to the table's 16 rows it must give exactly what F.linear gives on the plain bfloat16 matrix (a row
    alone as beside others), and what a prepared file keeps is that plain matrix."""
    p = copy.deepcopy(anchored.loaded.model.products()[0])
    p.set_kernels((BF16,) * MAX_TABLE_ROWS)
    plain = p.prepared()[f"low.{BF16}"]
    assert plain.dtype == torch.bfloat16 and not plain.is_mkldnn and plain.shape == p._full.shape
    assert torch.equal(plain, p._full.to(torch.bfloat16))
    x = torch.randn(1, MAX_TABLE_ROWS, p.weight.shape[1])
    with torch.inference_mode():
        for rows in range(1, MAX_TABLE_ROWS + 1):
            expected = F.linear(x[:, :rows].to(torch.bfloat16), plain[: p.width]).float()
            assert torch.equal(p.product(x[:, :rows], p.width), expected), rows
            assert torch.equal(p.product(x[:, rows - 1 : rows], p.width), expected[:, -1:]), rows


class _MixedRows:
    """A call that mixes text rows with the gap rows `rows` (`layers.Adapt`: the first step of a request)."""

    def __init__(self, rows: list[int]) -> None:
        self.rows, self.every_row = torch.tensor(rows), False


@pytest.mark.parametrize("kernel", LOW)
def test_a_gap_row_beside_text_rows_gets_the_bits_a_decoding_step_gives_it(anchored, kernel):
    """The first step of a request mixes text rows (the `mixed` table) with gap rows: a gap row's keys and
    values must be what one-token-per-step decoding computes for it, or a verifying step and a naive one
    part at a near-tie later (bench.speed's agreement fell to 0.94-0.97 on the Zen 4 EPYC before)."""
    p = copy.deepcopy(anchored.loaded.model.products()[0])
    p.mixed = (LINEAR,) * MAX_TABLE_ROWS
    p.set_kernels((kernel,) * MAX_TABLE_ROWS)
    x = torch.randn(1, 7, p.weight.shape[1])
    gaps = [2, 5, 6]
    with torch.inference_mode():
        mixed = torch.cat(p(x, _MixedRows(gaps), 0), -1)
        for i in gaps:
            assert torch.equal(mixed[:, i : i + 1], decoding_call(p, x[:, i : i + 1])), i
        text = [i for i in range(7) if i not in gaps]
        assert torch.equal(mixed[:, text], p.product(x, p.width, mixed=True)[:, text])


def test_wide_bfloat16_calls_run_in_pieces_that_keep_each_row_s_bits(anchored):
    """A prefill's text rows are later recomputed one at a time (the row before a gap): the wide kernel
    must give a row what the one-row kernel gives it. `steady_rows` finds the piece size that does, per
    shape, the calibration keeps it, and a call of more rows runs in pieces of that size."""
    products = copy.deepcopy(anchored.loaded.model.products())
    for p in products:
        p.set_kernels((BF16,) * MAX_TABLE_ROWS)
    found = run(steady_rows(products, BF16))
    assert run(steady_rows(products, LINEAR)) == {}  # float32 prefills are not cut
    calibration = replace(UNMEASURED, kernels={p.shape_key: (BF16,) * MAX_TABLE_ROWS for p in products},
                          wide=BF16, steady_rows=found or {products[0].shape_key: 32})
    assert Calibration.from_json(json.loads(json.dumps(asdict(calibration)))) == calibration
    model = copy.deepcopy(anchored.loaded.model)
    calibration.apply(model.products(), half=True)
    for p in model.products():
        assert p.wide == BF16 and p.steady_rows == calibration.steady_rows.get(p.shape_key, 0)
        x = torch.randn(1, 150, p.weight.shape[1])
        with torch.inference_mode():
            alone = torch.cat([p.product(x[:, i : i + 1], p.width) for i in range(150)], 1)
            whole = p.product(x, p.width)
        if p.shape_key in found:
            assert torch.equal(whole, alone), p.shape_key
        elif not torch.equal(whole, alone):  # then no piece size helps: the row kernels differ
            p.steady_rows = MAX_TABLE_ROWS
            with torch.inference_mode():
                assert not torch.equal(p.product(x, p.width), alone), p.shape_key
        if p.steady_rows:
            with torch.inference_mode():
                pieces = torch.cat([p.product(x[:, i : i + p.steady_rows], p.width)
                                    for i in range(0, 150, p.steady_rows)], 1)
            assert torch.equal(whole, pieces)
    calibration.apply(model.products(), half=False)
    assert all(p.steady_rows == 0 for p in model.products())


def test_small_models_are_not_calibrated_and_stay_exactly_float32(anchored):
    assert anchored.loaded.calibration == UNMEASURED
    assert all(HALF not in p.kernels for p in anchored.loaded.model.products())
    assert calibration_for(anchored.loaded.model, torch.device("cpu")) == (UNMEASURED, False)


def test_a_measurement_gives_a_kernel_table_per_shape_and_a_row_cost(anchored):
    model = anchored.loaded.model
    saved = [(p.kernels, p.wide, p.mixed) for p in model.products()]
    try:
        found = measure(model)
    finally:
        _restore(model.products(), saved)
    assert set(found.kernels) == {p.shape_key for p in model.products()} == set(found.exact)
    assert all(len(set(t)) == 1 and len(t) == MAX_TABLE_ROWS and set(t) <= set(KERNELS) for t in found.kernels.values())
    assert all(HALF not in t for t in found.exact.values())
    assert found.row_cost[0] == 1.0 and len(found.row_cost) == 16
    decoding = next(iter(found.kernels.values()))[0]
    assert found.wide in (LINEAR, COLUMNS) or (found.wide == decoding and decoding in LOW)
    exact = copy.deepcopy(model)
    replace(found, wide=decoding if decoding in LOW else found.wide).apply(exact.products(), half=False)
    assert all(p.wide in (LINEAR, COLUMNS) for p in exact.products())  # an exact load keeps float32 prefills


def test_decoding_takes_a_kernel_that_gives_a_row_the_same_bits_beside_other_rows(anchored):
    """A row must get the same logits whether a step runs it alone or with drafts, or verified drafting
    stops writing what one-token-per-step decoding writes: when any kernel is row-invariant here, the
    calibration picks one of those."""
    model = anchored.loaded.model
    products = model.products()
    saved = [(p.kernels, p.wide, p.mixed) for p in products]
    try:
        found = measure(model)
        for p in products:
            p.set_kernels((HALF, BF16) * (MAX_TABLE_ROWS // 2))  # the reduced copies, for every kernel to be tried
        steady = [k for k in KERNELS if row_invariant(products, k)]
    finally:
        _restore(products, saved)
    chosen = next(iter(found.kernels.values()))[0]
    assert not steady or chosen in steady, (chosen, steady)
    if chosen in steady:
        p = products[0]
        p.set_kernels(found.kernels[p.shape_key])
        try:
            x = torch.randn(1, 5, p.weight.shape[1])
            with torch.inference_mode():
                alone = torch.cat([p.product(x[:, i : i + 1], p.width) for i in range(5)], 1)
                assert torch.equal(p.product(x, p.width), alone)
        finally:
            _restore([p], saved[:1])


def test_decoding_cost_weighs_the_few_row_forwards_steps_mostly_run():
    # whole forwards of SmolLM2 on a 2-core AVX2 machine (ms): float16 falls behind from 8 rows
    timed = {LINEAR: {1: 114.0, 2: 239.0, 4: 272.0, 8: 232.0, 16: 299.0},
             COLUMNS: {1: 101.0, 2: 115.0, 4: 113.0, 8: 167.0, 16: 205.0},
             HALF: {1: 68.0, 2: 103.0, 4: 151.0, 8: 193.0, 16: 388.0}}
    assert min(timed, key=lambda k: decode_cost(timed[k])) == HALF  # but steps mostly run one row
    timed[HALF][1] = 100.0
    assert min(timed, key=lambda k: decode_cost(timed[k])) == COLUMNS
    assert decode_cost({1: 50.0}) == 50.0  # weights are normalised over the row counts timed
    assert _table({1: LINEAR, 2: COLUMNS, 8: LINEAR})[:9] == (LINEAR,) + (COLUMNS,) * 6 + (LINEAR,) * 2


def test_calls_past_the_table_take_the_wide_kernel_up_to_the_rows_it_was_timed_at(anchored):
    p = anchored.loaded.model.products()[0]
    saved = p.wide, p.mixed
    try:
        p.wide, p.mixed = COLUMNS, (HALF,) * 4
        width = p.weight.shape[1]
        assert p._kernel(torch.zeros(1, MAX_TABLE_ROWS + 1, width)) == COLUMNS
        assert p._kernel(torch.zeros(1, MAX_WIDE_ROWS, width)) == COLUMNS
        assert p._kernel(torch.zeros(1, MAX_WIDE_ROWS + 1, width)) == LINEAR  # a long prefill
        assert p._kernel(torch.zeros(1, 3, width), mixed=True) == HALF
        assert p._kernel(torch.zeros(1, 5, width), mixed=True) == COLUMNS  # past the mixed table
        assert p._kernel(torch.zeros(1, 3, width)) == p.kernels[2]
    finally:
        p.wide, p.mixed = saved


def test_a_row_cost_measured_while_the_machine_was_busy_never_makes_rows_cheaper_than_one():
    """A forward over one row timed while another process held a core ran 5x slower than over two rows;
    taken as it was, every extra row looked free and the sampler drafted ten rows a step."""
    clean = {1: 30.0, 2: 33.0, 3: 36.0, 5: 41.0, 9: 51.0, 16: 68.0}

    def timer(k: int) -> float:
        return clean[k] * (5.0 if k == 1 else 1.0)

    costs = run(_row_cost(timer))  # type: ignore[arg-type]
    assert all(c >= 1.0 for c in costs) and list(costs) == sorted(costs)
    assert costs[-1] == round(68.0 / 33.0, 3)


def test_drafting_follows_what_rows_cost():
    assert DraftPolicy((), 8).plan() == Plan(8, 7)  # unmeasured (a GPU): the family's lookahead
    assert DraftPolicy((1.0,) * 9, 8).plan() == Plan(8, 7)  # rows for free: draft as far as it goes
    steep = DraftPolicy((1.0, 1.8, 2.4, 3.0, 3.6, 4.2, 4.8, 5.4, 6.0), 8)
    assert steep.plan() == Plan(1, 0)  # every row costs most of a forward: no drafting
    cheap_ish = DraftPolicy((1.0, 1.1, 1.15, 1.2, 1.25, 1.3, 1.5, 1.7, 2.0), 8)
    for _ in range(300):
        cheap_ish.observe(3, 3)
    assert cheap_ish.plan().most >= 3  # drafts nearly always kept: worth a few rows
    for _ in range(100000):
        cheap_ish.observe(3, 0)
    assert cheap_ish.plan() == Plan(1, 0)  # drafts never kept: not worth a row


def test_drafting_plans_for_runs_kept_whole():
    """Drafts come in runs (a copied line is right to its end or wrong from its first token): where a run's
    first draft is kept 40% of the time and the rest follow it, the planner drafts further than it would
    for drafts kept 40% of the time each."""
    policy = DraftPolicy((1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.35, 1.4), 8)
    for kept in [6] * 400 + [0] * 600:
        policy.observe(6, kept)
    assert abs(policy.kept_rate - 0.4) < 0.02
    assert policy.plan().most >= 5 > policy.plan(kept_rate=policy.kept_rate).most


def test_greedy_output_is_the_same_whatever_the_plan(anchored, monkeypatch):
    """The plan only sets how many tokens a step keeps: no drafts, lookup drafts only, mask-row drafts."""
    sp, tok = anchored.special, anchored.tokenizer
    repeated = [sp.bos_id] + tok.encode("x = values[0]\ny = values[1]\nz = values[") + [sp.mask_id] * 8 + [sp.eos_id]
    for ids in (_canvas(anchored), repeated):
        request = InfillRequest(ids, max_grow=8)
        outputs = []
        for plan in (Plan(1, 0), Plan(1, 4), Plan(3, 2), Plan(8, 7)):
            monkeypatch.setattr(DraftPolicy, "plan", lambda self, plan=plan: plan)
            outputs.append(anchored.infill([request], DenoiseParams(threshold=0.3))[0].canvas)
        assert all(o == outputs[0] for o in outputs)


@pytest.mark.parametrize("kind", ["Q4_0", "Q4_1", "Q8_0"])
def test_a_block_product_multiplies_by_the_file_s_own_weights(kind):
    """ONNX Runtime's kernel on a GGUF file's blocks gives x times the weights the gguf package dequantizes,
    to the precision of rows quantized to 8 bits per block of 32 (as llama.cpp computes them)."""
    import gguf
    import numpy as np
    from gguf.quants import dequantize, quantize

    from engine.kernels.block_products import BlockProduct, Blocks, available

    if not available():
        pytest.skip("onnxruntime is an optional dependency of the CPU kernels")  # installed by `make setup`
    weights = np.random.default_rng(0).normal(size=(96, 64)).astype(np.float32)
    blocks = quantize(weights, gguf.GGMLQuantizationType[kind])
    exact = torch.from_numpy(dequantize(blocks, gguf.GGMLQuantizationType[kind]).astype(np.float32))
    data = torch.from_numpy(np.ascontiguousarray(blocks).view(np.uint8).reshape(96, -1).copy())
    product = BlockProduct([Blocks(kind, data[:40]), Blocks(kind, data[40:])], threads=1)
    x = torch.randn(3, 64, generator=torch.Generator().manual_seed(0))
    expected = x @ exact.T
    got = product(x)
    assert got.shape == (3, 96)
    assert torch.allclose(got, expected, atol=0.02 * expected.abs().max())


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("form", ["decoding", "row_blocks"])
def test_a_decoding_step_s_attention_gives_each_row_what_it_gets_alone(batch, form):
    """Verified drafting writes what one-token-per-step decoding writes only if a row's attention has the
    same bits beside drafts as alone: the CPU kernel rounds a query row differently among several. The
    decoding attention (two products, or where those do not keep a row's bits here, the products on blocks
    of one shape) and each form it may run keep them, and agree with the fused kernel to float precision."""
    from engine.models.layers import attention_by_row_blocks, decoding_attention, sdpa

    attend = decoding_attention if form == "decoding" else attention_by_row_blocks

    generator = torch.Generator().manual_seed(0)
    k = torch.randn(batch, 3, 300, 64, generator=generator)
    v = torch.randn(batch, 3, 300, 64, generator=generator)
    for rows in (2, 3, 5, 8, MAX_TABLE_ROWS, MAX_TABLE_ROWS + 3):
        q = torch.randn(batch, 9, rows, 64, generator=generator)
        mask = torch.zeros(batch, 9, rows, 300).masked_fill(torch.rand(batch, 9, rows, 300, generator=generator) < 0.2,
                                                           float("-inf"))
        together = attend(q, k, v, mask)
        alone = torch.cat([attend(q[:, :, i : i + 1], k, v, mask[:, :, i : i + 1]) for i in range(rows)], 2)
        assert torch.equal(together, alone), rows
        assert torch.allclose(together, sdpa(q, k, v, mask), atol=1e-5)
