"""Token boundaries at the edges of a gap for left-to-right models (infill.leads, canvas `heal`)."""

from __future__ import annotations

import pytest

from engine import DenoiseParams, Engine, InfillRequest
from infill import FillOptions, fill, plan_completion
from infill.canvas import build_canvas, line_break_ids
from infill.leads import TextLead, lead_text
from infill.spots import Spot
from tests.support.checkpoints import tiny_tokenizer

SOURCE = '''def area(width, height):
    """Area of a rectangle."""
    result = width * height
    return result


def greet(name):
    message = "hello " + name
    print(message)
'''


class Special:
    mask_id, eos_id, pad_id, bos_id = 599, 0, 0, 1


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


@pytest.mark.parametrize(
    ("before", "lead"),
    [
        ("def f(x):\n    ", "\n    "),  # a line being started: back to before its line break
        ("x = 1\n", "\n"),
        ("x = 1\n\n\n", "\n\n\n"),  # blank lines go with it: "\n\n" is one token in real text
        ("    return ", " "),  # a lone space belongs to the next word
        ("", ""),
    ],
)
def test_lead_text(tokenizer, before, lead):
    assert lead_text(before, tokenizer) == lead


def test_lead_backs_off_the_last_token_mid_line(tokenizer):
    before = "    value = compute("
    lead = lead_text(before, tokenizer)
    assert lead and before.endswith(lead)
    assert tokenizer.decode(tokenizer.encode(before)[-1:]) == lead


def _cursors() -> list[int]:
    """Insertion points an editor user meets: a new line's indentation, after `return `, after `(`."""
    return [SOURCE.index("    return result"), SOURCE.index("    return result") + 4,
            SOURCE.index("result\n") , SOURCE.index("name)") + 0, SOURCE.index("print(") + 6]


@pytest.mark.parametrize("cursor", _cursors())
def test_healed_canvas_prefix_is_how_the_tokenizer_splits_the_whole_file(tokenizer, cursor):
    """The tokens before a healed gap are a prefix of the tokens of the whole document, at every cursor;
    without healing they are not at a line start (the indentation glues to the line break in real text)."""
    whole = tokenizer.encode(SOURCE)
    spot = Spot(cursor, cursor, 8, "line")
    healed = build_canvas(SOURCE, [spot], tokenizer, Special, 4096, heal=True)
    prefix = list(healed.ids[1 : healed.slots[0].start])
    assert whole[: len(prefix)] == prefix
    assert SOURCE[:cursor].endswith(healed.slots[0].lead)


def test_without_healing_a_line_start_is_a_boundary_the_tokenizer_never_makes(tokenizer):
    cursor = SOURCE.index("    return result") + 4
    plain = build_canvas(SOURCE, [Spot(cursor, cursor, 8, "line")], tokenizer, Special, 4096)
    prefix = list(plain.ids[1 : plain.slots[0].start])
    assert tokenizer.encode(SOURCE)[: len(prefix)] != prefix


def test_replaced_lines_keep_their_last_line_break_in_the_suffix(tokenizer):
    start = SOURCE.index("    result =")
    end = SOURCE.index("    return result")
    canvas = build_canvas(SOURCE, [Spot(start, end, 12, "line")], tokenizer, Special, 4096, heal=True)
    slot = canvas.slots[0]
    assert slot.lead == "\n" and slot.tail == 1
    after = list(canvas.ids[slot.end : -1])
    assert after == tokenizer.encode(SOURCE[end - 1 :])  # "\n    return result..." as in real text


def test_a_lead_leaves_text_between_two_spots(tokenizer):
    """`configure(processors=processors)` with both names masked: '=' is one token, and a lead that moved it
    into the second gap joined both gaps into one run of masks (the engine then returned one span for two)."""
    text = "configure(processors=processors)\n"
    first = text.index("processors")
    second = text.index("processors", first + 1)
    spots = [Spot(first, first + 10, 4, "line"), Spot(second, second + 10, 4, "line")]
    canvas = build_canvas(text, spots, tokenizer, Special, 4096, heal=True)
    left, right = canvas.slots
    assert right.lead == "" and left.end < right.start
    assert tokenizer.decode(list(canvas.ids[left.end : right.start])) == "="


def test_text_lead_allows_tokens_that_continue_it(tokenizer):
    lead = TextLead("\n    ", tokenizer)
    texts = [tokenizer.decode([i]) for i in range(len(tokenizer))]
    allowed = lead.allowed([])
    assert allowed and all(texts[i].startswith("\n    ") or "\n    ".startswith(texts[i]) for i in allowed)
    newline = tokenizer.encode("\n")[0]
    assert newline in allowed
    assert lead.allowed([newline]) is not None  # the indentation is still owed
    assert lead.allowed(tokenizer.encode("\n    ")) is None


@pytest.fixture(scope="module")
def engine(tiny_anchored) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


def test_a_span_writes_its_lead_first_and_stops_only_after_it(engine):
    """The lead's own line break is not the line break that ends a one-line span."""
    sp, tok = engine.special, engine.tokenizer
    lead = TextLead("\n    ", tok)
    canvas = [sp.bos_id] + tok.encode("def area(w, h):") + [sp.mask_id] * 8 + tok.encode("\n") + [sp.eos_id]
    request = InfillRequest(canvas, span_stops=(line_break_ids(tok),), span_leads=(lead,))
    result = engine.infill([request], DenoiseParams(threshold=0.3))[0]
    ids = result.spans[0].token_ids
    covered = next(j for j in range(len(ids) + 1) if lead.allowed(ids[:j]) is None)
    assert tok.decode(ids[:covered]).startswith("\n    ")
    assert ids[covered] not in engine.special.end_ids  # the span did not end at the lead's line break


def test_a_line_completion_on_an_empty_line_writes_a_line(engine):
    text = SOURCE.replace("    return result\n", "\n")
    cursor = text.index("height\n") + len("height\n")
    spot = plan_completion(text, cursor)
    assert spot is not None and spot.kind == "line"
    result = fill(engine, text, [spot], DenoiseParams(threshold=0.3), options=FillOptions(keep_invalid=True))
    (edit,) = result.edits  # a random model writes nonsense, but it writes a line, without the lead
    assert edit.start == cursor and edit.new_text.strip() and "\n" not in edit.new_text
