"""Hole markers: a line whose only content is the comment `<prefix> <|hole|>` or `<prefix> <|hole:N|>`,
where `<prefix>` is the language's line comment (`#`, `//`, `--`: `LanguageSpec.comment_prefix`).

Each marker is one block spot that replaces the marker comment (its indentation stays, so the first
generated line starts at that indentation); N is the token budget, BODY_TOKENS without it.
"""

from __future__ import annotations

import re

from infill.languages import LanguageSpec, get_language
from infill.positions import ByteMap
from infill.spots import Spot
from infill.windows import BODY_TOKENS


def hole_pattern(spec: LanguageSpec) -> re.Pattern[str]:
    prefix = re.escape(spec.comment_prefix)
    return re.compile(rf"^([ \t]*)({prefix}[ \t]*<\|hole(?::(\d+))?\|>)[ \t]*\r?$", re.MULTILINE)


def find_holes(text: str, language: str | LanguageSpec = "python") -> list[Spot]:
    """Spots for every hole marker that is a real comment (not text inside a string; without a grammar,
    every marker line counts)."""
    spec = get_language(language)
    markers = list(hole_pattern(spec).finditer(text))
    if not markers:
        return []
    tree = spec.parse(text) if spec.has_grammar else None
    bytemap = ByteMap(text)
    spots = []
    for marker in markers:
        start, end = marker.start(2), marker.end(2)
        if tree is not None:
            node = tree.root_node.descendant_for_byte_range(bytemap.to_byte(start), bytemap.to_byte(end))
            if node is None or node.type not in spec.comments:
                continue
        budget = int(marker.group(3)) if marker.group(3) else BODY_TOKENS
        if budget < 1:
            raise ValueError(f"hole at offset {start}: a token budget must be at least 1")
        end_of_line = marker.end(0)
        if text[end_of_line - 1 : end_of_line] == "\r":
            end_of_line -= 1
        spots.append(Spot(start, end_of_line, budget, "block"))
    return spots
