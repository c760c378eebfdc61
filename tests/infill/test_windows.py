"""Window choice over real Python snippets; `|` marks the cursor."""

from __future__ import annotations

import pytest

from infill.windows import BLOCK_TOKENS, BODY_TOKENS, LINE_TOKENS, plan_completion, plan_regenerate
from tests.support.checkpoints import tiny_tokenizer

COMPLETIONS = [
    # (snippet, expected kind or None, expected mask count)
    ("def area(radius):|\n", "block", BODY_TOKENS),
    ("def area(radius):\n    |\n\nprint(area(2))\n", "block", BODY_TOKENS),
    ("class Stack:\n    |", "block", BODY_TOKENS),
    ("for item in items:|", "block", BLOCK_TOKENS),
    ("with open(path) as stream:\n    |", "block", BLOCK_TOKENS),
    ("try:\n    run()\nexcept OSError as exc:|", "block", BLOCK_TOKENS),
    ("config = {|", "block", BLOCK_TOKENS),
    ("names = [\n    |\n", "block", BLOCK_TOKENS),
    ("result = compute(|)", "line", LINE_TOKENS),
    ("result = compute(a, |)\n", "line", LINE_TOKENS),
    ("total = price * |", "line", LINE_TOKENS),
    ("import os\n|", "line", LINE_TOKENS),
    ("def f(x):\n    y = x + 1\n    |\n", "line", LINE_TOKENS),
    ("return|", "line", LINE_TOKENS),
    ('message = "hello, |"', "line", LINE_TOKENS),
    ("# compute the |", "line", LINE_TOKENS),
    ("values.|", "line", LINE_TOKENS),
    ("items = [\n    1,\n    2,\n    |\n", "line", LINE_TOKENS),
    ("data = load(\n    'a',\n\nvalue = 1\n\nx = (|", "block", BLOCK_TOKENS),
    ("import os\nresult = call(\n    os.path,\n    |", "line", LINE_TOKENS),
    # nothing to do
    ("result = comp|ute(a)", None, 0),
    ("x = |compute(a)", None, 0),
    ("# compute |the mean", None, 0),
    ('message = "hello |world"', None, 0),
    ("total = price * quantity|\n", None, 0),
    ("print(total)|", None, 0),
]


@pytest.mark.parametrize(("snippet", "kind", "n_masks"), COMPLETIONS)
def test_completion_window(snippet: str, kind: str | None, n_masks: int) -> None:
    offset = snippet.index("|")
    spot = plan_completion(snippet.replace("|", "", 1), offset)
    if kind is None:
        assert spot is None
        return
    assert spot is not None
    assert (spot.kind, spot.n_masks) == (kind, n_masks)
    assert spot.start == spot.end == offset


SOURCE = '''import os


def load(path):
    """Read a file."""
    with open(path) as stream:
        data = stream.read()
    return data


class Cache:
    def __init__(self):
        self.items = {}
'''


@pytest.mark.parametrize(
    ("start", "end", "cut"),
    [
        (4, 8, None),  # a whole function
        (6, 7, None),  # a whole with statement
        (7, 8, "with_statement"),  # the with body's line and the return after it
        (5, 8, None),  # the whole body
        (4, 5, "block"),  # header and docstring, not the rest of the body
        (8, 12, "function_definition"),  # from inside one definition into the next
        (1, 1, None),
        (3, 4, "function_definition"),  # a header without its body
        (2, 3, None),  # blank lines only
    ],
)
def test_regenerate_range_and_cut_warning(start: int, end: int, cut: str | None) -> None:
    spot = plan_regenerate(SOURCE, start, end, "python")
    lines = SOURCE.splitlines(keepends=True)
    assert SOURCE[spot.start : spot.end] == "".join(lines[start - 1 : end])
    assert spot.kind == ("line" if start == end else "block")
    if cut is None:
        assert spot.warning is None
    else:
        assert spot.warning is not None and cut in spot.warning


def test_regenerate_mask_count_has_slack_over_the_token_count() -> None:
    tokenizer = tiny_tokenizer()
    spot = plan_regenerate(SOURCE, 4, 8, "python", tokenizer=tokenizer)
    tokens = len(tokenizer.encode(SOURCE[spot.start : spot.end], add_special_tokens=False))
    assert spot.n_masks == -(-tokens * 5 // 4) + 4


def test_regenerate_last_line_without_a_break() -> None:
    text = "a = 1\nb = 2"
    spot = plan_regenerate(text, 2, 2, "python")
    assert text[spot.start : spot.end] == "b = 2"


@pytest.mark.parametrize(("start", "end"), [(0, 1), (3, 2), (1, 14), (14, 14)])
def test_regenerate_rejects_lines_outside_the_file(start: int, end: int) -> None:
    with pytest.raises(ValueError, match="not inside the file"):
        plan_regenerate(SOURCE, start, end, "python")


def test_planning_a_large_file_stays_fast() -> None:
    import time

    one = 'def f{0}(x):\n    """Doc 世界 {0}."""\n    return [x, {{"k": (x, {0})}}]\n\n\n'
    text = "".join(one.format(i) for i in range(1500)) + "def last(y):\n    "
    started = time.perf_counter()
    spot = plan_completion(text, len(text))
    assert spot is not None and spot.kind == "block"
    assert time.perf_counter() - started < 0.5
