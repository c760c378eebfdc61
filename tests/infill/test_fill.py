"""The whole infill path on a real engine (a tiny random Dream checkpoint: its text is noise, so these
tests check structure, batching, re-masking and accounting, not quality)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import DenoiseParams, Engine
from infill import FillJob, FillOptions, Spot, apply_edits, fill, fill_many, plan_regenerate
from tests.support.recording import Recording

pytestmark = pytest.mark.slow

SOURCE = "def one(x):\n    return x\n\n\ndef two(y):\n    return y\n\n\ndef three(z):\n    return z\n"


@pytest.fixture(scope="module")
def engine(tiny_dream: Path) -> Engine:
    return Engine.load(str(tiny_dream), device="cpu")


def body_spots(n_masks: int) -> list[Spot]:
    return [
        Spot(s.start + 4, s.end - 1, n_masks, "line")
        for s in (plan_regenerate(SOURCE, line, line, "python") for line in (2, 6, 10))
    ]


def test_three_spots_run_as_one_denoising_run(engine: Engine) -> None:
    params = DenoiseParams.reference(steps=6)
    options = FillOptions(retries=0, keep_invalid=True, max_grow=0)
    recorder = Recording(engine)
    together = fill(recorder, SOURCE, body_spots(6), params, options=options)
    assert len(recorder.calls) == 1 and len(recorder.calls[0]) == 1
    assert recorder.calls[0][0].canvas.count(engine.special.mask_id) == 18
    alone = [fill(engine, SOURCE, [spot], params, options=options) for spot in body_spots(6)]
    largest = max(r.stats.forward_passes for r in alone)
    assert together.stats.forward_passes <= largest + 1
    assert sum(r.stats.forward_passes for r in alone) >= 2.5 * together.stats.forward_passes
    assert together.stats.new_tokens == 18


def test_edits_map_back_to_their_spots(engine: Engine) -> None:
    spots = body_spots(5)
    result = fill(engine, SOURCE, spots, DenoiseParams(), options=FillOptions(retries=0, keep_invalid=True))
    assert {(e.start, e.end) for e in result.edits} <= {(s.start, s.end) for s in spots}
    tokenizer = engine.tokenizer
    for edit in result.edits:
        assert engine.special.eos_id not in edit.token_ids
        decoded = tokenizer.decode(list(edit.token_ids), clean_up_tokenization_spaces=False)
        assert edit.new_text.strip() and edit.new_text.split("\n")[0] in decoded
    filled = apply_edits(SOURCE, result.edits)
    assert filled.startswith("def one(x):\n    ") and "\n\n\ndef two(y):\n    " in filled


def test_a_result_that_breaks_the_syntax_is_remasked_then_dropped(engine: Engine) -> None:
    text = "def f(x):\n    return x\n\n\nprint(f(1))\n"
    spot = plan_regenerate(text, 2, 2, "python", tokenizer=engine.tokenizer)
    recorder = Recording(engine)
    result = fill(recorder, text, [spot], DenoiseParams(), options=FillOptions(retries=2))
    first, *retries = recorder.calls
    assert retries, "the noise of a random model never parses, so a re-mask round must run"
    assert result.attempts == len(recorder.calls)
    start = first[0].canvas.index(engine.special.mask_id)
    end = start + spot.n_masks + first[0].max_grow
    mask = engine.special.mask_id
    for request in (r[0] for r in retries):
        assert request.max_grow == 0
        masked = [i for i, token in enumerate(request.canvas) if token == mask]
        assert masked and masked == list(range(masked[0], masked[-1] + 1))
        assert start <= masked[0] and masked[-1] < end
        assert request.canvas[:start] == first[0].canvas[:start]
    assert result.edits == [] and any("does not parse" in note for note in result.notes)
    assert result.stats.forward_passes > 0


def test_keep_invalid_returns_the_best_attempt(engine: Engine) -> None:
    text = "def f(x):\n    return x\n"
    spot = plan_regenerate(text, 2, 2, "python", tokenizer=engine.tokenizer)
    result = fill(engine, text, [spot], DenoiseParams(), options=FillOptions(retries=1, keep_invalid=True))
    (edit,) = result.edits
    assert (edit.start, edit.end) == (spot.start, spot.end) and edit.new_text.endswith("\n")
    assert result.notes == []


def test_documents_are_batched_into_one_engine_call(engine: Engine) -> None:
    recorder = Recording(engine)
    jobs = [
        FillJob(SOURCE, tuple(body_spots(4)[:1]), "python", "a.py"),
        FillJob(SOURCE, tuple(body_spots(4)[1:]), "python", "b.py"),
    ]
    results = fill_many(recorder, jobs, DenoiseParams(), options=FillOptions(retries=0, keep_invalid=True))
    assert len(recorder.calls) == 1 and len(recorder.calls[0]) == 2
    assert len(results) == 2 and results[1].canvas_ids.count(engine.special.mask_id) == 8


def test_cancel_returns_no_edits(engine: Engine) -> None:
    result = fill(engine, SOURCE, body_spots(8), DenoiseParams(), cancel=lambda: True)
    assert result.cancelled and result.edits == []


def test_a_document_without_spots_costs_nothing(engine: Engine) -> None:
    recorder = Recording(engine)
    jobs = [FillJob(SOURCE, (), "python"), FillJob(SOURCE, tuple(body_spots(3)[:1]), "python")]
    empty, filled = fill_many(
        recorder, jobs, DenoiseParams(), options=FillOptions(retries=0, keep_invalid=True)
    )
    assert len(recorder.calls) == 1 and len(recorder.calls[0]) == 1
    assert empty.edits == [] and empty.stats.forward_passes == 0 and not empty.cancelled
    assert filled.stats.forward_passes > 0


def test_instruction_is_a_comment_block_at_the_top_of_the_canvas(engine: Engine) -> None:
    options = FillOptions(retries=0, keep_invalid=True, instruction="use pathlib")
    result = fill(engine, SOURCE, body_spots(3)[:1], DenoiseParams(), options=options)
    bos = engine.special.bos_id
    assert result.canvas_ids[0] == bos
    decoded = engine.tokenizer.decode(result.canvas_ids[1:], clean_up_tokenization_spaces=False)
    assert decoded.startswith("# Instruction: use pathlib\ndef one(x):\n")


def test_a_long_file_keeps_room_for_growth(engine: Engine) -> None:
    text = "".join(f"value_{i} = compute({i}, 'label {i}')\n" for i in range(400))
    spot = plan_regenerate(text, 200, 201, "python", tokenizer=engine.tokenizer)
    recorder = Recording(engine)
    fill(recorder, text, [spot], DenoiseParams(), options=FillOptions(retries=0, keep_invalid=True))
    (request,) = recorder.calls[0]
    assert request.max_grow == 32
    assert len(request.canvas) + request.max_grow <= engine.max_length
    decoded = engine.tokenizer.decode(request.canvas, clean_up_tokenization_spaces=False)
    assert "value_198 = " in decoded and "value_201 = " in decoded and "value_199 = " not in decoded
    assert "value_0 = " not in decoded


def test_a_one_line_insertion_stops_at_a_line_break(engine: Engine) -> None:
    """Only the first line of a one-line insertion is kept, so its span carries the line-break ids as
    stops; a replaced range and a block keep every line and carry none."""
    from infill.canvas import line_break_ids

    breaks = line_break_ids(engine.tokenizer)
    newline = engine.tokenizer.encode("\n", add_special_tokens=False)
    assert set(newline) <= breaks and not set(engine.tokenizer.encode("x", add_special_tokens=False)) & breaks
    recorder = Recording(engine)
    end_of_one = SOURCE.index("return x") + len("return x")
    spots = [Spot(end_of_one, end_of_one, 6, "line"), Spot(end_of_one + 1, end_of_one + 1, 6, "block"),
             body_spots(6)[2]]
    fill(recorder, SOURCE, spots, DenoiseParams(), options=FillOptions(retries=0, keep_invalid=True))
    assert recorder.calls[0][0].span_stops == (breaks, frozenset(), frozenset())
