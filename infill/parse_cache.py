"""Parsing a text that is one edit away from a recent one, incrementally.

A completion parses the same document several times (to plan the window, to take the baseline of
syntax errors, to check each filled candidate), and consecutive requests differ by a keystroke.
A fresh parse of a 120 kB file costs about 24 ms; an incremental one, given the edit that separates
the text from a recent one, costs a fraction of that. The edit is found from the longest common prefix
and suffix of the two texts' bytes, which is exact for a single contiguous change and still correct
(only less incremental) for anything else.

The trees handed out are shared: callers read them and must not `edit` them.
"""

from __future__ import annotations

import threading
from typing import TypedDict

import tree_sitter

KEEP = 4


def _common_prefix(a: bytes, b: bytes) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # bisect with C-speed slice compares instead of a Python loop over bytes
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(source: bytes, byte: int) -> tuple[int, int]:
    row = source.count(b"\n", 0, byte)
    return row, byte - (source.rfind(b"\n", 0, byte) + 1)


class TreeEdit(TypedDict):
    """`tree_sitter.Tree.edit`'s keyword arguments."""

    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: tuple[int, int]
    old_end_point: tuple[int, int]
    new_end_point: tuple[int, int]


def edit_between(old: bytes, new: bytes) -> TreeEdit:
    """The `Tree.edit` arguments that turn `old` into `new` as one replaced range."""
    start = _common_prefix(old, new)
    tail = _common_suffix(old, new, min(len(old), len(new)) - start)
    old_end, new_end = len(old) - tail, len(new) - tail
    return {
        "start_byte": start, "old_end_byte": old_end, "new_end_byte": new_end,
        "start_point": _point(old, start), "old_end_point": _point(old, old_end), "new_end_point": _point(new, new_end),
    }


class ParseCache:
    """The last few (source, tree) pairs of one language; a new source is parsed against the latest."""

    def __init__(self, language: tree_sitter.Language) -> None:
        self._parser = tree_sitter.Parser(language)
        self._items: list[tuple[bytes, tree_sitter.Tree]] = []
        self._lock = threading.Lock()

    def parse(self, source: bytes) -> tree_sitter.Tree:
        with self._lock:
            for seen, tree in self._items:
                if seen == source:
                    return tree
            if self._items:
                old_source, old_tree = self._items[-1]
                base = old_tree.copy()
                base.edit(**edit_between(old_source, source))
                tree = self._parser.parse(source, base)
            else:
                tree = self._parser.parse(source)
            self._items = [*self._items[-(KEEP - 1) :], (source, tree)]
            return tree
