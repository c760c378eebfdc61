"""Small tree-sitter queries shared by the window planner and the post-processor."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")": "(", "]": "[", "}": "{"}
BRACE_OPENERS = frozenset({"${", "#{"})
"""Tokens that open a `{ ... }` pair under another name: template substitutions (JavaScript, TypeScript,
Bash `${`) and Ruby's interpolation `#{`. They count as `{`, or their `}` would close nothing."""


def _bracket(leaf: tree_sitter.Node) -> str | None:
    """The bracket a token is (`{` for a BRACE_OPENERS token), or None."""
    if leaf.type in BRACE_OPENERS:
        return "{"
    return leaf.type if leaf.type in OPENERS or leaf.type in CLOSERS else None


def iter_leaves(
    node: tree_sitter.Node, start_byte: int = 0, end_byte: int | None = None
) -> Iterator[tree_sitter.Node]:
    """Leaves (tokens, MISSING nodes included) that overlap or touch [start_byte, end_byte], in order."""
    stop = node.end_byte if end_byte is None else end_byte
    stack = [node]
    while stack:
        current = stack.pop()
        if current.end_byte < start_byte or current.start_byte > stop:
            continue
        if current.child_count == 0:
            yield current
            continue
        stack.extend(reversed(current.children))


def scope_start(tree: tree_sitter.Tree, byte: int) -> int:
    """Start of the top-level node that holds (or last starts before) `byte`: bracket and token
    scans begin there instead of at the top of the file. An unclosed bracket further up makes the
    parser wrap everything after it in one top-level ERROR, so nothing open is missed."""
    start = 0
    for child in tree.root_node.children:
        if child.start_byte >= byte:
            break
        start = child.start_byte
    return start


def last_leaf_before(tree: tree_sitter.Tree, byte: int, from_byte: int = 0) -> tree_sitter.Node | None:
    """The last real (non-MISSING, non-empty) token ending at or before `byte`."""
    found = None
    for leaf in iter_leaves(tree.root_node, from_byte, byte):
        if leaf.end_byte <= byte and not leaf.is_missing and leaf.end_byte > leaf.start_byte:
            found = leaf
    return found


@dataclass(frozen=True)
class Bracket:
    char: str
    start_byte: int


def open_brackets(tree: tree_sitter.Tree, byte: int, from_byte: int = 0) -> list[Bracket]:
    """Stack of brackets opened in [from_byte, byte) and not closed before `byte` (innermost last).

    Brackets come from the tree's tokens, so brackets inside strings and comments do not count; a
    stray closer that matches nothing is ignored.
    """
    stack: list[Bracket] = []
    for leaf in iter_leaves(tree.root_node, from_byte, byte):
        if leaf.is_missing or leaf.end_byte > byte or leaf.start_byte < from_byte:
            continue
        char = _bracket(leaf)
        if char in OPENERS:
            stack.append(Bracket(char, leaf.start_byte))
        elif char in CLOSERS and stack and stack[-1].char == CLOSERS[char]:
            stack.pop()
    return stack


def bracket_tokens(tree: tree_sitter.Tree, start_byte: int, end_byte: int) -> list[tuple[int, str]]:
    """(start byte, char) of every real bracket token inside [start_byte, end_byte)."""
    return [
        (leaf.start_byte, char)
        for leaf in iter_leaves(tree.root_node, start_byte, end_byte)
        if not leaf.is_missing
        and (char := _bracket(leaf)) is not None
        and start_byte <= leaf.start_byte
        and leaf.end_byte <= end_byte
    ]


def error_nodes(tree: tree_sitter.Tree) -> list[tree_sitter.Node]:
    """Every ERROR and MISSING node, outermost first."""
    found: list[tree_sitter.Node] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if not node.has_error and not node.is_missing:
            continue
        if node.is_error or node.is_missing:
            found.append(node)
        stack.extend(reversed(node.children))
    return found


def error_points(tree: tree_sitter.Tree) -> list[int]:
    """Byte offsets where the parser gave up: the start of each innermost ERROR, each MISSING node."""
    points = []
    for node in error_nodes(tree):
        if node.is_missing or not any(child.is_error for child in node.children):
            points.append(node.start_byte)
    return sorted(points)
