"""Incremental parsing against a recent text gives the tree a fresh parse gives."""

from __future__ import annotations

import random

import tree_sitter

from infill.languages import get_language
from infill.parse_cache import ParseCache, edit_between

SOURCE = (
    "import os\n\n\nclass Box:\n    def __init__(self, w, h):\n        self.w = w\n        self.h = h\n\n"
    "    def area(self):\n        return self.w * self.h  # é, 汉字\n\n\ndef main():\n    print(Box(2, 3).area())\n"
)


def test_edit_between_finds_the_one_replaced_range():
    old, new = b"ab\ncdef\ngh", b"ab\ncXYZf\ngh"
    edit = edit_between(old, new)
    assert (edit["start_byte"], edit["old_end_byte"], edit["new_end_byte"]) == (4, 6, 7)
    assert edit["start_point"] == (1, 1) and edit["old_end_point"] == (1, 3) and edit["new_end_point"] == (1, 4)
    assert edit_between(b"same", b"same")["old_end_byte"] == 4


def test_incremental_trees_equal_fresh_trees_over_random_edits():
    spec = get_language("python")
    cache = ParseCache(spec.language)
    fresh = tree_sitter.Parser(spec.language)
    rng = random.Random(7)
    text = SOURCE
    pieces = ["x", "(", ")", ":", "\n    ", "def ", "'", "汉", "return 1\n", ""]
    for _ in range(200):
        a = rng.randrange(len(text) + 1)
        b = min(len(text), a + rng.randrange(6))
        text = text[:a] + rng.choice(pieces) + text[b:]
        if rng.random() < 0.2:
            text = SOURCE  # back to a text seen before: served from the cache
        source = text.encode("utf-8")
        assert str(cache.parse(source).root_node) == str(fresh.parse(source).root_node)
