"""Where a suggestion for an automatic trigger stops: after its first complete statement.

The slowest pauses are the long suggestions: at the end of `def f(x):` the planner gives the body 64 tokens
and a line that opens a block carries its body, so the user waits for every line of a body before seeing
the first. With `FillOptions.first_statement` an insertion ends at the line break after its first complete
statement that leaves the file parsing (a block header carries on to the first statement of its body in
Python, to its closing brace in C-like languages), and the rest comes on the next pause, after the user
takes it, from the text as it then stands. Invoked requests keep whole blocks.
"""

from __future__ import annotations

from typing import Any

from infill.languages import LanguageSpec
from infill.syntax import last_leaf_before, scope_start
from infill.windows import statement_complete


def first_statement(body: str, text: str, start: int, spec: LanguageSpec) -> str | None:
    """`body`, an insertion at `start` in `text`, up to (not including) the line break that ends its first
    complete statement that is not a block header; None while no written line ends one. A header goes on
    (alone it does not parse, and the parse check would drop it), as does an unclosed block; blank lines
    before the statement belong to it; a language without a grammar has no statements to stop at."""
    if not spec.has_grammar or spec.line_only:
        return None
    line_start = text.rfind("\n", 0, start) + 1
    end = body.find("\n")
    while end != -1:
        head = body[:end].rstrip("\r")
        if head.strip():
            line = (text[line_start:start] + head).rsplit("\n", 1)[-1]
            if not spec.opens_block(line) and _ends_statement(text[:start], head, spec):
                return head
        end = body.find("\n", end + 1)
    return None


def cut_to_first_statement(new_text: str, text: str, start: int, spec: LanguageSpec) -> str:
    """`new_text` (an insertion's final text) cut after its first complete statement, keeping the line break
    it ended with (an insertion at a line's start must not merge with the line after it)."""
    head = first_statement(new_text, text, start, spec)
    if head is None:
        return new_text
    return head + new_text[len(new_text.rstrip("\r\n")):]


def _ends_statement(before: str, head: str, spec: LanguageSpec) -> bool:
    """Whether `head`, written after `before`, ends with a statement that has nothing pending (no open
    bracket or string, no trailing operator) and holds no syntax error."""
    prefix = before + head
    tree = spec.parse(prefix)
    start, cursor = len(before.encode("utf-8")), len(prefix.encode("utf-8"))
    last = last_leaf_before(tree, cursor, scope_start(tree, cursor))
    return last is not None and statement_complete(last, spec) and not _error_within(tree.root_node, start, cursor)


def _error_within(node: Any, start: int, end: int) -> bool:
    """Whether an ERROR or MISSING node overlaps bytes start..end (an unterminated string parses as a
    statement after an ERROR that holds its opening quotes)."""
    if node.end_byte <= start or node.start_byte >= end:
        return False
    if node.is_error or node.is_missing:
        return True
    return bool(node.has_error) and any(_error_within(child, start, end) for child in node.children)
