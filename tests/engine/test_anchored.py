"""The anchored family: the adapter-off invariant, an exact cache, and its attention forms (its GGUF
base: test_gguf_base.py)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from transformers import LlamaForCausalLM

from engine import DenoiseParams, InfillRequest
from engine.models.anchored import layout, right_view
from tests.support.anchored_canvas import multi_spot
from tests.support.reference_llama import reference_llama


def _greedy(ref: LlamaForCausalLM, ids: list[int], n: int) -> list[int]:
    out: list[int] = []
    with torch.no_grad():
        for _ in range(n):
            out.append(int(ref(torch.tensor([ids + out])).logits[0, -1].argmax()))
    return out


@pytest.mark.usefixtures("float32_keys")
def test_adapter_off_is_the_base_greedy_decoding(anchored):
    """With the adapter off, threshold decoding (any threshold) and the reference rule write, token for token,
    what greedy autoregressive decoding of the base writes from the prefix alone (transformers' Llama)."""
    sp, tok = anchored.special, anchored.tokenizer
    prefix = [sp.bos_id] + tok.encode("def area(w, h):\n    return")
    canvas = prefix + [sp.mask_id] * 10 + tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]
    expected = _greedy(reference_llama(anchored), prefix, 10)
    for params in (DenoiseParams(adapter=False), DenoiseParams(adapter=False, threshold=0.0),
                   DenoiseParams.reference().with_(adapter=False)):
        result = anchored.infill([InfillRequest(canvas)], params.with_(fill_after_eos=False))[0]
        written = result.spans[0].token_ids
        cut = next((i for i, t in enumerate(expected) if t == sp.eos_id), len(expected))
        assert written[:cut] == expected[:cut], params
        assert result.stats.forward_passes == cut + (cut < len(expected))


def test_adapter_off_keeps_no_right_context_copies(anchored):
    """With the adapter off no row reads the text after the gap, so the K/V hold no slots for its copies
    (building and attending over them cost `ar` 6.5 ms of a request's first forward and about 1 ms of every
    later one after 2,000 tokens), while the adapter on keeps them."""
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.families.anchored_step import AnchoredPredictor

    sp, tok = anchored.special, anchored.tokenizer
    canvas = [sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 6 + \
        tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]
    extra = {}
    for on in (True, False):
        batch = CanvasBatch.build([canvas], [0], sp.mask_id, sp.pad_id, torch.device("cpu"))
        extra[on] = AnchoredPredictor(anchored.loaded, batch, DenoiseParams(adapter=on)).kv.extra
    assert extra[True] > 0 and extra[False] == 0


def test_adapter_on_reads_the_right_context(anchored):
    sp, tok = anchored.special, anchored.tokenizer
    prefix = [sp.bos_id] + tok.encode("def area(w, h):\n    return")
    results = []
    for suffix in ("\n\nprint(area(2, 3))\n", "\n\nclass Shape:\n    pass\n"):
        canvas = prefix + [sp.mask_id] * 8 + tok.encode(suffix) + [sp.eos_id]
        results.append(anchored.infill([InfillRequest(canvas)], DenoiseParams.reference())[0].spans[0].token_ids)
    assert results[0] != results[1]


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.9])
@pytest.mark.usefixtures("float32_keys")
def test_the_cache_is_exact(anchored, threshold):
    """Cached steps (prefill once, then only new commits and read mask rows) give exactly the tokens of
    recomputing the whole canvas every step, with multi-token commits, two spans and span growth."""
    request = InfillRequest(multi_spot(anchored), max_grow=16)
    params = DenoiseParams(threshold=threshold, fill_after_eos=False)
    cached = anchored.infill([request], params)[0]
    naive = anchored.infill([request], params.with_(cache="none"))[0]
    assert cached.canvas == naive.canvas
    assert len(cached.canvas) > len(request.canvas)  # the spans grew
    if threshold == 0.0:
        assert cached.stats.forward_passes < cached.stats.new_tokens  # more than one commit per step


@pytest.mark.usefixtures("float32_keys")
def test_each_gap_reads_at_most_the_right_context_the_adapter_was_trained_with(anchored, monkeypatch):
    """With two gaps, the first one's right context would run over the second gap to the end; it keeps
    the adapter's `max_right` tokens of fixed text (here 6), and the cache stays exact with the cut."""
    ids = multi_spot(anchored)
    model = anchored.loaded.model
    monkeypatch.setattr(model.adapter, "shape", dataclasses.replace(model.adapter.shape, max_right=6))
    spans = [(i, i + 6) for i in (ids.index(anchored.special.mask_id),)]
    second = ids.index(anchored.special.mask_id, spans[0][1])
    spans.append((second, second + 4))
    positions, segments = layout(len(ids), spans, model.adapter.shape.gap_room)
    view = right_view(segments[None], positions[None], model.adapter.shape.gap_room, 6)
    per_gap = {g: int(((view.gap == g) & (view.index >= 0)).sum()) for g in (1, 3)}
    assert per_gap == {1: 6, 3: 6}
    assert int(view.index[0, 5]) == spans[0][1] + 5  # the first gap's copies: the 6 tokens after it
    request = InfillRequest(ids, max_grow=8)
    params = DenoiseParams(threshold=0.3, fill_after_eos=False)
    assert anchored.infill([request], params)[0].canvas == anchored.infill([request], params.with_(cache="none"))[0].canvas


def test_copies_sit_in_slots_only_where_a_cpu_reads_them_as_a_batch():
    """Four gaps or more with right context: each gap's copies start at its slot (padded to `limit`), so
    `copies_apart` can read them as a strided batch; fewer gaps keep the copies packed."""
    from engine.models.copies_apart import MIN_SLOTS

    def view(gaps: int):
        spans = [(10 * i + 4, 10 * i + 6) for i in range(gaps)]
        positions, segments = layout(10 * gaps + 8, spans, 16)
        return right_view(segments[None], positions[None], 16, limit=5)

    packed = view(MIN_SLOTS - 1)
    assert packed.slot == 0 and packed.index.shape[1] == 5 * (MIN_SLOTS - 1)
    slotted = view(MIN_SLOTS + 1)
    assert slotted.slot == 5 and slotted.index.shape[1] == 5 * (MIN_SLOTS + 1)
    for g in range(MIN_SLOTS + 1):
        entries = slotted.gap[0, 5 * g : 5 * g + 5]
        assert set(entries[slotted.index[0, 5 * g : 5 * g + 5] >= 0].tolist()) == {2 * g + 1}


def test_a_batch_row_gets_what_it_gets_alone(anchored):
    sp, tok = anchored.special, anchored.tokenizer
    other = [sp.bos_id] + tok.encode("x = [") + [sp.mask_id] * 5 + tok.encode("]\n") + [sp.eos_id]
    params = DenoiseParams(threshold=0.3)
    alone = anchored.infill([InfillRequest(multi_spot(anchored))], params)[0]
    together = anchored.infill([InfillRequest(other), InfillRequest(multi_spot(anchored))], params)[1]
    assert alone.canvas == together.canvas


def test_keystrokes_reuse_the_document_cache_exactly(anchored):
    """A second request on the same document (a word typed before the gap) reuses the cached prefix and
    right context and writes exactly what a cold request writes."""
    sp, tok = anchored.special, anchored.tokenizer
    suffix = tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]
    first = [sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 6 + suffix
    second = [sp.bos_id] + tok.encode("def area(w, h):\n    area = w\n    return") + [sp.mask_id] * 6 + suffix
    params = DenoiseParams(threshold=0.3)
    anchored.infill([InfillRequest(first, doc_id="doc")], params)
    warm = anchored.infill([InfillRequest(second, doc_id="doc")], params)[0]
    cold = anchored.infill([InfillRequest(second)], params)[0]
    assert warm.canvas == cold.canvas
    assert warm.stats.positions < cold.stats.positions


def test_keys_kept_in_bfloat16_give_the_float32_logits_to_their_rounding(anchored, monkeypatch):
    """The same first step over a bfloat16 cache and a float32 one: logits a bfloat16 rounding apart,
    not equal (the keys were narrowed) and not further."""
    sp, tok = anchored.special, anchored.tokenizer
    short = [sp.bos_id] + tok.encode("x = [") + [sp.mask_id] * 5 + tok.encode("]\n") + [sp.eos_id]
    canvases = [multi_spot(anchored), short]
    monkeypatch.setattr(anchored.loaded, "kv_dtype", None)
    wide = _predict_fresh(anchored, canvases, written=2)
    monkeypatch.setattr(anchored.loaded, "kv_dtype", torch.bfloat16)
    narrow = _predict_fresh(anchored, canvases, written=2)
    assert not torch.equal(wide, narrow)
    assert torch.allclose(wide, narrow, atol=0.05 * float(wide.abs().max()), rtol=0)


def _predict_fresh(anchored, canvases: list[list[int]], written: int) -> torch.Tensor:
    """Logits of the first step (every fixed token a query) over `canvases`, each gap's first `written`
    masks holding a token."""
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.families.anchored_step import AnchoredPredictor

    sp = anchored.special
    batch = CanvasBatch.build(canvases, list(range(len(canvases))), sp.mask_id, sp.pad_id, torch.device("cpu"))
    for b, row in enumerate(batch.rows):
        for start, _ in row.spans:
            batch.x[b, start : start + written] = 7
    predictor = AnchoredPredictor(anchored.loaded, batch, DenoiseParams())
    with torch.inference_mode():
        return predictor.predict(batch, batch.leading_masks(3), torch.zeros_like(batch.masked))[0]


@pytest.mark.usefixtures("float32_keys")
def test_a_wide_forward_attends_by_segment_as_one_masked_kernel_does(anchored, monkeypatch):
    """A wide forward (a prefill) runs fixed text segment by segment on the causal kernel and the gap rows
    by their mask (`segment_attention`): the same logits as one masked kernel over every query, for two
    canvases of different lengths (padded queries), two spans, and committed gap tokens (right bias)."""
    import engine.families.anchored_step as step

    sp, tok = anchored.special, anchored.tokenizer
    short = [sp.bos_id] + tok.encode("x = [") + [sp.mask_id] * 5 + tok.encode("]\n") + [sp.eos_id]
    canvases = [multi_spot(anchored), short]
    monkeypatch.setattr(step, "WIDE", 10**9)
    masked = _predict_fresh(anchored, canvases, written=2)
    monkeypatch.setattr(step, "WIDE", 0)
    by_segment = _predict_fresh(anchored, canvases, written=2)
    assert torch.allclose(masked, by_segment, atol=1e-5, rtol=1e-5)


@pytest.mark.usefixtures("float32_keys")
def test_segment_attention_serves_keystrokes_and_growth_as_the_mask_does(anchored, monkeypatch):
    """With every forward attending by segment (text queries that start inside their segment after a
    keystroke reuses the cached prefix, spans that grow), requests write what the masked kernel writes."""
    import engine.families.anchored_step as step

    sp, tok = anchored.special, anchored.tokenizer
    suffix = tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]
    first = [sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 6 + suffix
    second = [sp.bos_id] + tok.encode("def area(w, h):\n    area = w\n    return") + [sp.mask_id] * 6 + suffix
    params = DenoiseParams(threshold=0.3)

    def run(doc: str) -> list[list[int]]:
        anchored.infill([InfillRequest(first, doc_id=doc)], params)
        warm = anchored.infill([InfillRequest(second, doc_id=doc)], params)[0]
        grown = anchored.infill([InfillRequest(multi_spot(anchored), max_grow=16)], params)[0]
        return [warm.canvas, grown.canvas]

    monkeypatch.setattr(step, "WIDE", 10**9)
    masked = run("masked")
    monkeypatch.setattr(step, "WIDE", 0)
    assert run("by segment") == masked


@pytest.mark.usefixtures("float32_keys")
def test_a_narrow_forward_with_the_copies_apart_is_the_masked_kernel(anchored, monkeypatch):
    """Every row over the canvas keys in one call and each gap's rows over its own right-context copies
    in another (`copies_apart`) give the logits one masked kernel over all keys gives, to float rounding,
    for two canvases of different lengths (padded queries), two spans, and committed gap tokens (right
    bias); and not when the copies part is left out."""
    import engine.families.anchored_step as step
    from engine.models import copies_apart

    sp, tok = anchored.special, anchored.tokenizer
    short = [sp.bos_id] + tok.encode("x = [") + [sp.mask_id] * 5 + tok.encode("]\n") + [sp.eos_id]
    canvases = [multi_spot(anchored), short]
    monkeypatch.setattr(step, "WIDE", 10**9)
    monkeypatch.setattr(copies_apart, "MIN_SLOTS", 10**6)  # never
    masked = _predict_fresh(anchored, canvases, written=2)
    used = []
    plan = copies_apart.plan
    monkeypatch.setattr(copies_apart, "MIN_SLOTS", 2)  # the two gaps
    monkeypatch.setattr(step.copies_apart, "plan", lambda *a: used.append(plan(*a)) or used[-1])
    apart = _predict_fresh(anchored, canvases, written=2)
    assert used and all(p is not None and p.slot and len(p.parts) == 2 for p in used)  # both canvases' gaps
    assert torch.allclose(masked, apart, atol=1e-5, rtol=1e-5)
    flash = copies_apart._flash
    assert all(p.width != p.slot for p in used)  # so the canvas-keys call is told apart by its key count

    def canvas_keys_only(q, k, v, m):  # the copies call (a batch of slots) weighs nothing in the join
        out, lse = flash(q, k, v, m)
        return (out, lse.new_full(lse.shape, float("-inf"))) if k.shape[2] == used[0].slot else (out, lse)

    monkeypatch.setattr(copies_apart, "_flash", canvas_keys_only)
    assert not torch.allclose(masked, _predict_fresh(anchored, canvases, written=2), atol=1e-3)


def test_a_decoding_steps_mask_is_the_general_form_for_every_layer(anchored):
    """A decoding step builds only the right-context columns per layer, into one buffer: the mask each layer
    gets equals `base + right * right_bias[layer]` bit for bit, in any order of layers, for rows where only
    some take the right bias."""
    from engine.models.anchored import Adapter, AdapterShape, GapAdapt

    adapter = Adapter(anchored.loaded.model.shape, AdapterShape())
    layers, heads = adapter.right_bias.shape
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        adapter.right_bias.copy_(torch.randn(layers, heads, generator=generator))
    rows, width, copies = 3, 40, 12
    allowed = torch.rand(2, 1, rows, width + copies, generator=generator) < 0.7
    right = torch.zeros_like(allowed)
    right[:, :, :2, width:] = allowed[:, :, :2, width:]  # two committed rows read the copies with the bias
    adapt = GapAdapt(adapter, torch.ones(2, rows, dtype=torch.bool), allowed, right)
    assert adapt.every_row
    base, pairs = adapt.masks[-1]
    assert pairs is not None
    for layer in [*range(layers), *reversed(range(layers))]:
        expected = base + pairs * adapter.right_bias[layer][None, :, None, None]
        assert torch.equal(adapt._mask(layer, -1), expected)


def _one_gap(anchored):
    """A predictor over one canvas with one gap of six masks after a line of text: (predictor, batch, the
    gap's first position, a `changed` of nothing)."""
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.families.anchored_step import AnchoredPredictor

    sp, tok = anchored.special, anchored.tokenizer
    canvas = [sp.bos_id] + tok.encode("def add(a, b):\n    return") + [sp.mask_id] * 6 + tok.encode("\n\nx = 1\n")
    batch = CanvasBatch.build([canvas], [0], sp.mask_id, sp.pad_id, anchored.loaded.device)
    predictor = AnchoredPredictor(anchored.loaded, batch, DenoiseParams(cache="fixed"))
    return predictor, batch, canvas.index(sp.mask_id), torch.zeros_like(batch.masked)


def test_a_row_run_again_for_its_logits_keeps_its_cached_keys(anchored):
    """The row before the gap runs again in a step for its logits (its K/V were cached by the prefill): the
    cache keeps the K/V it had, so the gap rows read the keys the prefill wrote whether that step runs one
    row or several (a row rounds apart alone and beside others)."""
    predictor, batch, gap, no_change = _one_gap(anchored)
    with torch.inference_mode():
        predictor.predict(batch, batch.leading_masks(1), no_change)  # the prefill
        marked = []
        for layer in predictor.kv.layers:  # values no forward computes: only a write would change them
            layer.k[0, :, gap - 1] = 7.0
            layer.v[0, :, gap - 1] = -7.0
            marked.append(layer.k[0, :, gap - 1].clone())
        predictor.kv.text_logits[0].clear()  # else the row's logits are read from the cache, not run again
        logits, ran = predictor.predict(batch, batch.leading_masks(3), no_change)
    assert int(ran[0]) >= 1 and logits.shape[0] == 3  # the row before the gap ran, with the mask rows
    assert all(torch.equal(layer.k[0, :, gap - 1], m) and bool((layer.v[0, :, gap - 1] == -7.0).all())
               for layer, m in zip(predictor.kv.layers, marked))


def test_a_replaced_draft_makes_the_keys_after_it_stale_even_where_the_same_token_comes_back(anchored):
    """Verified drafting replaces a wrong draft and masks the drafts after it; when the next step writes
    one of those back with the token it held as a draft, its keys were computed beside the wrong draft and
    must be computed again: the cache then holds what it holds when the drafts never happened."""
    from engine.denoise.canvas_batch import CanvasBatch
    from engine.families.anchored_step import AnchoredPredictor

    sp, tok = anchored.special, anchored.tokenizer
    canvas = [sp.bos_id] + tok.encode("def add(a, b):\n    return") + [sp.mask_id] * 6 + tok.encode("\n\nx = 1\n")
    gap = canvas.index(sp.mask_id)
    wrong, right, again = tok.encode(" b")[0], tok.encode(" a")[0], tok.encode(" +")[0]

    def run(steps: list[dict[int, int]]) -> AnchoredPredictor:
        batch = CanvasBatch.build([canvas], [0], sp.mask_id, sp.pad_id, anchored.loaded.device)
        predictor = AnchoredPredictor(anchored.loaded, batch, DenoiseParams(cache="fixed"))
        with torch.inference_mode():
            predictor.predict(batch, batch.leading_masks(1), torch.zeros_like(batch.masked))  # the prefill
            for writes in steps:
                for offset, token in writes.items():
                    batch.x[0, gap + offset] = token
                predictor.predict(batch, batch.leading_masks(1), torch.zeros_like(batch.masked))
        return predictor

    drafted = run([{0: wrong, 1: again}, {0: right, 1: sp.mask_id}, {1: again}])
    direct = run([{0: right}, {1: again}])
    assert any(not torch.equal(a.k[0, :, gap + 1], b.k[0, :, gap + 1])
               for a, b in zip(run([{0: wrong, 1: again}]).kv.layers, direct.kv.layers))  # the draft's keys differ
    for a, b in zip(drafted.kv.layers, direct.kv.layers):
        assert torch.equal(a.k[0, :, gap : gap + 2], b.k[0, :, gap : gap + 2])
        assert torch.equal(a.v[0, :, gap : gap + 2], b.v[0, :, gap : gap + 2])


def test_a_cached_text_row_gives_its_logits_without_running_again(anchored):
    """A gap's first token comes from the logits of the text row before it. Once a step has read them they
    are kept with the row's K/V: a step that needs them again (the same canvas asked again, the cursor back
    where it was) runs no row for them and reads the same logits."""
    predictor, batch, gap, no_change = _one_gap(anchored)
    with torch.inference_mode():
        first, _ = predictor.predict(batch, batch.leading_masks(1), no_change)  # the prefill
        assert set(predictor.kv.text_logits[0]) == {gap - 1}
        again, ran = predictor.predict(batch, batch.leading_masks(1), no_change)
    assert int(ran[0]) == 0 and torch.equal(again, first)


def test_a_document_asked_again_reads_the_kept_logits_and_writes_what_a_cold_request_writes(anchored):
    """The document cache carries the text rows' logits with their K/V: the same canvas asked again runs no
    text row at all, and an edit before the gap runs the edited rows again (their logits are not kept)."""
    sp, tok = anchored.special, anchored.tokenizer
    suffix = tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]
    first = [sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 6 + suffix
    edited = [sp.bos_id] + tok.encode("def area(w, h):\n    return w") + [sp.mask_id] * 6 + suffix
    params = DenoiseParams(threshold=0.3)
    cold = anchored.infill([InfillRequest(first)], params)[0]
    anchored.infill([InfillRequest(first, doc_id="again")], params)
    again = anchored.infill([InfillRequest(first, doc_id="again")], params)[0]
    assert again.canvas == cold.canvas
    text = len(first) - 6
    assert again.stats.positions == cold.stats.positions - text  # the gap rows alone: no text row ran
    typed = anchored.infill([InfillRequest(edited, doc_id="again")], params)[0]
    assert typed.canvas == anchored.infill([InfillRequest(edited)], params)[0].canvas


def test_a_document_kept_by_a_one_row_loop_keeps_its_storage_and_counts_all_of_it(anchored):
    """A loop of one row hands its K/V to the document cache as they are (no copy at the end of every
    request); the cache counts the storage those views keep alive (the right-context slots past the
    canvas too), so its byte budget holds what it says. Rows of a larger batch are copied out."""
    sp, tok = anchored.special, anchored.tokenizer
    suffix = tok.encode("\n\nprint(area(2, 3))\n") + [sp.eos_id]
    canvas = [sp.bos_id] + tok.encode("def area(w, h):\n    return") + [sp.mask_id] * 6 + suffix
    other = [sp.bos_id] + tok.encode("x = [") + [sp.mask_id] * 5 + tok.encode("]\n") + [sp.eos_id]
    params = DenoiseParams(threshold=0.3)
    anchored.infill([InfillRequest(canvas, doc_id="alone")], params)
    alone = anchored.doc_cache.get("alone")
    assert alone is not None
    k = alone.layers[0].k
    assert k.untyped_storage().nbytes() > k.numel() * k.element_size()  # a view: the copy slots stay with it
    assert alone.nbytes == sum(t.untyped_storage().nbytes() for layer in alone.layers for t in (layer.k, layer.v)) \
        + sum(t.numel() * t.element_size() for t in alone.text_logits.values())
    anchored.infill([InfillRequest(other), InfillRequest(canvas, doc_id="batched")], params)
    batched = anchored.doc_cache.get("batched")
    assert batched is not None
    k = batched.layers[0].k
    assert k.untyped_storage().nbytes() == k.numel() * k.element_size()  # copied out of the batch's storage
