"""Spots from a tree-sitter query: every node captured as `@spot` (or `@body`) is regenerated.

Example (every Python function whose name starts with `test_`):
`(function_definition name: (identifier) @name body: (block) @body (#match? @name "^test_"))`.
A captured body in braces (`{ ... }`) is regenerated between its braces, as whole lines when it spans
several, so the braces stay and the spot is shaped like a Python body.
"""

from __future__ import annotations

import math
import re
from typing import Any

import tree_sitter

from infill.languages import LanguageSpec, get_language
from infill.positions import ByteMap
from infill.spots import Spot
from infill.windows import REGENERATE_EXTRA, REGENERATE_SLACK, count_tokens

SPOT_CAPTURES = ("spot", "body")


class BadQuery(ValueError):
    """A query that does not compile or captures nothing to regenerate."""


def function_body_query(name_regex: str, spec: LanguageSpec) -> str:
    """A query for the bodies of functions whose name matches `name_regex` (the row's `function_patterns`)."""
    try:
        re.compile(name_regex)
    except re.error as exc:
        raise BadQuery(f"--function-regex {name_regex!r}: {exc}") from None
    if not spec.function_patterns:
        raise BadQuery(f"--function-regex: no function patterns for {spec.id}")
    quoted = name_regex.replace("\\", "\\\\").replace('"', '\\"')
    return "\n".join(f'({pattern} (#match? @name "{quoted}"))' for pattern in spec.function_patterns)


def spots_from_query(
    text: str, query_source: str, language: str | LanguageSpec = "python", tokenizer: Any = None
) -> list[Spot]:
    """One block spot per captured node, outermost kept when captures nest; in text order."""
    spec = get_language(language)
    if not spec.has_grammar:
        raise BadQuery(f"a query needs a grammar; {spec.id} has none")
    try:
        query = tree_sitter.Query(spec.language, query_source)
    except (tree_sitter.QueryError, ValueError) as exc:
        raise BadQuery(f"query does not compile with the {spec.id} grammar: {exc}") from None
    names = [query.capture_name(i) for i in range(query.capture_count)]
    wanted = [name for name in SPOT_CAPTURES if name in names]
    if not wanted:
        raise BadQuery("the query must capture the text to regenerate as @spot or @body")
    captures = tree_sitter.QueryCursor(query).captures(spec.parse(text).root_node)
    ranges = sorted(
        {(n.start_byte, n.end_byte) for name in wanted for n in captures.get(name, [])},
        key=lambda r: (r[0], -r[1]),
    )
    outer: list[tuple[int, int]] = []
    for low, high in ranges:
        if outer and low < outer[-1][1]:
            continue
        outer.append((low, high))
    bytemap = ByteMap(text)
    spots = []
    for low, high in outer:
        start, end = _inside_braces(text, bytemap.to_offset(low), bytemap.to_offset(high))
        if start == end:
            continue
        n_masks = math.ceil(count_tokens(text[start:end], tokenizer) * REGENERATE_SLACK) + REGENERATE_EXTRA
        spots.append(Spot(start, end, n_masks, "block"))
    return spots


def _inside_braces(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) without its braces when the node is a `{ ... }` body: the whole lines between them
    when the braces stand at the end of the header line and on a line of their own."""
    if not (text.startswith("{", start) and end - start >= 2 and text[end - 1] == "}"):
        return start, end
    opening_break = text.find("\n", start, end)
    closing_line = text.rfind("\n", start, end - 1) + 1
    if opening_break != -1 and not text[start + 1 : opening_break].strip() and not text[closing_line : end - 1].strip():
        return opening_break + 1, closing_line
    return start + 1, end - 1
