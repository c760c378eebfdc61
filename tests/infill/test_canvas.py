from __future__ import annotations

import pytest

from engine import SpecialTokens
from infill.canvas import START_GRID, ContextOverflow, build_canvas, instruction_header
from infill.spots import Spot
from tests.support.checkpoints import tiny_tokenizer

TOKENIZER = tiny_tokenizer()
SPECIAL = SpecialTokens(
    mask_id=TOKENIZER.convert_tokens_to_ids("<|mask|>"),
    eos_id=TOKENIZER.convert_tokens_to_ids("<|endoftext|>"),
    pad_id=TOKENIZER.convert_tokens_to_ids("<|endoftext|>"),
    bos_id=TOKENIZER.convert_tokens_to_ids("<|beginoftext|>"),
)


def encode(text: str) -> list[int]:
    return list(TOKENIZER.encode(text, add_special_tokens=False))


def test_one_spot_layout() -> None:
    text = "x = compute()\nprint(x)\n"
    spot = Spot(4, 13, 5, "line")
    canvas = build_canvas(text, [spot], TOKENIZER, SPECIAL, 1024)
    expected = [
        SPECIAL.bos_id,
        *encode("x = "),
        *[SPECIAL.mask_id] * 5,
        *encode("\nprint(x)\n"),
        SPECIAL.eos_id,
    ]
    assert list(canvas.ids) == expected
    (slot,) = canvas.slots
    assert list(canvas.ids[slot.start : slot.end]) == [SPECIAL.mask_id] * 5


def test_three_spots_share_one_canvas_in_text_order() -> None:
    text = "a = 1\nb = 2\nc = 3\nd = 4\n"
    spots = [Spot(16, 17, 3, "line"), Spot(4, 5, 2, "line"), Spot(10, 11, 4, "line")]
    canvas = build_canvas(text, spots, TOKENIZER, SPECIAL, 1024)
    assert [s.spot.start for s in canvas.slots] == [4, 10, 16]
    runs = [(s.start, s.end) for s in canvas.slots]
    assert [b - a for a, b in runs] == [2, 4, 3]
    assert canvas.ids.count(SPECIAL.mask_id) == 9
    between = list(canvas.ids[runs[0][1] : runs[1][0]])
    assert between == encode("\nb = ")


def test_indentation_before_an_insertion_moves_into_the_span() -> None:
    text = "def f(x):\n    \n"
    canvas = build_canvas(text, [Spot(14, 14, 4, "block")], TOKENIZER, SPECIAL, 1024)
    (slot,) = canvas.slots
    assert slot.lead == "    "
    assert list(canvas.ids[1 : slot.start]) == encode("def f(x):\n")


def test_overlapping_spots_are_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        build_canvas("abcdef", [Spot(0, 3, 1, "line"), Spot(3, 4, 1, "line")], TOKENIZER, SPECIAL, 1024)


def test_long_file_keeps_the_lines_nearest_the_spot_alternately() -> None:
    above = "".join(f"above_{i} = {i}\n" for i in range(200))
    below = "".join(f"below_{i} = {i}\n" for i in range(200))
    text = above + "target = \n" + below
    offset = len(above) + len("target = ")
    canvas = build_canvas(text, [Spot(offset, offset, 16, "line")], TOKENIZER, SPECIAL, 256, reserve=8)
    assert len(canvas.ids) + 8 <= 256
    kept = text[canvas.context_start : canvas.context_end]
    lines_above = kept[: kept.index("target")].count("\n")
    lines_below = kept[kept.index("target") :].count("\n") - 1
    assert lines_above > 5 and 0 <= lines_below - lines_above <= 2 * START_GRID
    assert kept.startswith(f"above_{200 - lines_above} = ")
    assert (200 - lines_above) % START_GRID == 0  # the window starts on the grid
    assert canvas.context_start > 0 and canvas.context_end < len(text)


def _starts_while_writing(budget: int, written_from: int, count: int) -> tuple[list[int], list[int]]:
    """(first line of each window, lines above the spot in it) as a user writes line after line."""
    lines = [f"v{i} = {i}\n" for i in range(400)]
    starts, above = [], []
    for written in range(written_from, written_from + count):
        text = "".join(lines[:written])
        canvas = build_canvas(text, [Spot(len(text), len(text), 16, "line")], TOKENIZER, SPECIAL, budget, reserve=8)
        assert len(canvas.ids) + 8 <= budget
        starts.append(text[: canvas.context_start].count("\n"))
        above.append(written - starts[-1])
    return starts, above


def test_a_window_keeps_its_start_while_the_user_writes_line_after_line() -> None:
    """The engine reuses the K/V of the prefix two canvases share: a cropped window must not start one
    line lower for every line written, or each request prefills the whole window again."""
    starts, above = _starts_while_writing(1024, 200, 3 * START_GRID)
    assert min(above) >= 2 * START_GRID  # a window this large moves on the coarsest grid
    assert all(s % START_GRID == 0 for s in starts)
    assert len(set(starts)) <= 5  # about one new start every START_GRID lines (they grow), not every line
    assert starts == sorted(starts)


def test_a_window_of_few_lines_moves_on_a_finer_grid_and_keeps_half_of_them() -> None:
    most = max(_starts_while_writing(256, 200, 1)[1])  # the lines a window of this budget holds
    starts, above = _starts_while_writing(256, 200, 3 * START_GRID)
    assert most < 2 * START_GRID and min(above) >= most // 2
    grid = 1 << ((most // 2).bit_length() - 1)
    assert all(s % grid == 0 for s in starts) and starts == sorted(starts)
    assert len(set(starts)) <= 2 + 3 * START_GRID // grid


def test_spots_that_cannot_fit_raise() -> None:
    text = "x = 1\n" * 400
    with pytest.raises(ContextOverflow):
        build_canvas(
            text,
            [Spot(0, 1, 2, "line"), Spot(len(text) - 2, len(text) - 1, 2, "line")],
            TOKENIZER,
            SPECIAL,
            128,
        )


def test_instruction_header_is_a_comment_block() -> None:
    header = instruction_header("use pathlib\nkeep the API", "#")
    assert header == "# Instruction: use pathlib\n# keep the API\n"
    canvas = build_canvas("x = 1\n", [Spot(4, 5, 2, "line")], TOKENIZER, SPECIAL, 1024, header=header)
    assert list(canvas.ids[1 : 1 + len(encode(header))]) == encode(header)
    assert instruction_header("  ", "#") == ""
