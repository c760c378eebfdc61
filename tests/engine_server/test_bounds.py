"""`remote.server.bounds`: the text cut before parsing and tokenizing leaves the canvas token for token what
the whole text gives, on texts many times the budget (random lines, long lines, a cursor anywhere), and a
lead is refused only when no tokens can spell it."""

from __future__ import annotations

import random

import pytest

from engine import Engine
from infill.canvas import START_GRID, ContextOverflow, build_canvas
from infill.leads import vocab_texts
from infill.spots import Spot
from remote.server.bounds import cut_around, cut_prompt, lead_writable, longest_token

LINES = ["x = 1\n", "def f(a, b):\n", "    return a + b\n", "\n", "# é 😀 中文\n", "\t\tvalue = [i for i in range(10)]\n",
         "s = '" + "y" * 80 + "'\n", " " * 40 + "\n", "class C:\n", "    pass\n"]


def random_text(rng: random.Random, lines: int) -> str:
    return "".join(rng.choice(LINES) for _ in range(lines))


def canvas_ids(engine: Engine, text: str, cursor: int, max_length: int, reserve: int) -> tuple[int, ...] | str:
    try:
        return build_canvas(text, [Spot(cursor, cursor, 4, "line")], engine.tokenizer, engine.special, max_length,
                            reserve=reserve, heal=True, max_right=engine.max_right).ids
    except ContextOverflow:
        return "overflow"


@pytest.mark.parametrize("seed", range(12))
def test_the_cut_text_gives_the_same_canvas_as_the_whole(local: Engine, seed: int) -> None:
    rng = random.Random(seed)
    max_length = rng.choice([128, 256])
    budget = max_length * longest_token(local.tokenizer)
    text = random_text(rng, rng.randint(2000, 4000))
    cursor = rng.choice([rng.randint(0, len(text)), len(text), text.rfind("\n", 0, len(text) // 2) + 1])
    reserve = rng.choice([0, 8])
    offset, kept = cut_around(text, cursor, cursor, budget)
    assert len(kept) < len(text)  # the cases cut something
    assert offset == 0 or text.count("\n", 0, offset) % START_GRID == 0  # on the planner's grid
    whole = canvas_ids(local, text, cursor, max_length, reserve)
    assert whole != "overflow" and canvas_ids(local, kept, cursor - offset, max_length, reserve) == whole
    assert cut_prompt(text[:cursor], text[cursor:], budget) == (kept, cursor - offset)


def test_short_texts_are_kept_whole_and_a_long_line_is_cut_inside(local: Engine) -> None:
    assert cut_around("x = 1\n" * 10, 30, 30, 1000) == (0, "x = 1\n" * 10)
    line = "y" * 10_000
    offset, kept = cut_around(line, 5000, 5000, 100)
    assert (offset, kept) == (4900, line[4900:5100])


def test_leads_that_tokens_can_spell_are_writable(local: Engine) -> None:
    tokenizer = local.tokenizer
    longest = max(vocab_texts(tokenizer), key=len)
    assert longest_token(tokenizer) >= len(longest)
    for lead in ["\n" * 5000 + "    ", " ", longest, longest + longest[:3]]:
        assert lead_writable(lead, tokenizer), repr(lead[:20])
    for lead in ["\ud800", "ab\ud800", "\U0010fffd" * 3]:
        assert not lead_writable(lead, tokenizer), repr(lead)
