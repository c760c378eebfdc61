"""Edit windows: where a completion or a regeneration goes, and how many masks it starts with.

Window sizes (initial mask counts; the engine grows a span that fills without an EOS, see infill.fill_document):
- LINE_TOKENS = 16 for one line: a Python line is 8-12 tokens on average with a BPE code tokenizer;
  with the threshold sampler the unused slots fill with EOS at high confidence in the first steps,
  so slack costs attention width more than steps;
- BLOCK_TOKENS = 48 for a control-flow body or the contents of a bracket opened at the end of a line
  (2-4 lines);
- BODY_TOKENS = 64 for the body of a `def` / `class` (4-6 lines); a longer body grows.
A regenerated range gets its own token count x 1.25 + 4 (slack for a slightly longer rewrite).
"""

from __future__ import annotations

import math
from typing import Any

from infill.languages import LanguageSpec, get_language
from infill.positions import ByteMap, LineIndex
from infill.spots import Spot
from infill.syntax import last_leaf_before, open_brackets, scope_start

LINE_TOKENS = 16
BLOCK_TOKENS = 48
BODY_TOKENS = 64
REGENERATE_SLACK = 1.25
REGENERATE_EXTRA = 4
CHARS_PER_TOKEN = 3.0
MAX_LINE_SUFFIX = 8
_LINE_SUFFIX_CHARS = set(")]}\"'`:,; \t")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def plan_completion(text: str, offset: int, language: str | LanguageSpec = "python") -> Spot | None:
    """The spot to complete at `offset`, or None when a completion there would only get in the way.

    None: the cursor is inside a word; more than closers follow it on its line (code after the cursor
    means the line is being edited, not written); it is mid-way through a comment; or it ends a
    statement that is already complete (`x = f()|`). Otherwise a line, or a block after a line that opens
    a body (`LanguageSpec.opens_block`: `:` in Python, `{` in C-like languages, `then`/`do`/`def` in Ruby,
    Lua and Bash) or after a bracket opened at the end of a line. A language without a grammar
    (`PLAIN_TEXT`) and data files (`line_only`) get lines only.
    """
    spec = get_language(language)
    if not 0 <= offset <= len(text):
        raise ValueError(f"offset {offset} is outside the text (length {len(text)})")
    lines = LineIndex(text)
    line = lines.line_of(offset)
    before = text[lines.line_start(line) : offset]
    after = text[offset : lines.line_end(line)]
    if before and after and _is_word(before[-1]) and _is_word(after[0]):
        return None
    rest = after.strip()
    if len(rest) > MAX_LINE_SUFFIX or any(char not in _LINE_SUFFIX_CHARS for char in rest):
        return None
    if not spec.has_grammar:
        return _spot(offset, LINE_TOKENS, "line")

    tree = spec.parse(text)
    bytemap = ByteMap(text)
    cursor = bytemap.to_byte(offset)
    here = tree.root_node.descendant_for_byte_range(max(cursor - 1, 0), cursor)
    while here is not None:
        if here.type in spec.comments and here.start_byte < cursor:
            return None if rest else _spot(offset, LINE_TOKENS, "line")
        if here.type in spec.strings and here.start_byte < cursor < here.end_byte:
            return _spot(offset, LINE_TOKENS, "line")
        here = here.parent

    scope = scope_start(tree, cursor)
    brackets = [b for b in open_brackets(tree, cursor, scope) if not _opens_body(tree, b.start_byte, spec)]
    last = last_leaf_before(tree, cursor, scope)
    header_line = _line_up_to(text, bytemap.to_offset(last.end_byte)) if last is not None else ""
    header = not rest and not spec.line_only and spec.opens_block(header_line)
    if brackets:
        opened_last = last is not None and last.start_byte == brackets[-1].start_byte
        if header and opened_last:
            return _spot(offset, _body_size(header_line, spec), "block")
        block = opened_last and not rest and not spec.line_only
        return _spot(offset, BLOCK_TOKENS if block else LINE_TOKENS, "block" if block else "line")
    if header:
        return _spot(offset, _body_size(header_line, spec), "block")
    if before.strip() == "":
        return _spot(offset, LINE_TOKENS, "line")
    if last is not None and not rest and statement_complete(last, spec):
        return None
    return _spot(offset, LINE_TOKENS, "line")


def _opens_body(tree: Any, byte: int, spec: LanguageSpec) -> bool:
    """Whether the bracket at `byte` opens a body of statements (a `{` whose node is one of the row's
    containers): inside it the cursor is among statements, not inside an expression."""
    bracket = tree.root_node.descendant_for_byte_range(byte, byte + 1)
    return bracket is not None and bracket.parent is not None and bracket.parent.type in spec.containers


def _line_up_to(text: str, offset: int) -> str:
    """The line that holds `offset`, up to it: the header line when the last token before the cursor ends
    it (the cursor may be on a blank line below it)."""
    return text[text.rfind("\n", 0, offset) + 1 : offset]


def _spot(offset: int, n_masks: int, kind: str) -> Spot:
    return Spot(offset, offset, n_masks, kind)


def _body_size(header_line: str, spec: LanguageSpec) -> int:
    """BODY_TOKENS when the header line starts a function or class, else BLOCK_TOKENS."""
    return BODY_TOKENS if spec.header_is_function(header_line) else BLOCK_TOKENS


def statement_complete(last: Any, spec: LanguageSpec) -> bool:
    """A statement ends at `last` and nothing is pending: no error around it, no trailing operator."""
    closes = bool(last.type) and set(last.type) <= set(")]};")  # `)`, `;`, bash's `))`
    if not last.is_named and not closes and not last.type.startswith(('"', "'", "`")):
        return False
    node = last
    while node is not None and node.type not in spec.statements:
        if node.is_error:
            return False
        node = node.parent
    return node is not None and not node.has_error and node.end_byte <= last.end_byte


def plan_regenerate(
    text: str,
    start_line: int,
    end_line: int,
    language: str | LanguageSpec = "python",
    tokenizer: Any = None,
) -> Spot:
    """A spot over whole lines START..END (1-based, inclusive, with their line breaks).

    The mask count is the replaced text's token count (by `tokenizer.encode`, or estimated at
    CHARS_PER_TOKEN characters a token without one) x REGENERATE_SLACK + REGENERATE_EXTRA. The spot's
    `warning` says when the range cuts through a syntax node, e.g. half of a function.
    """
    spec = get_language(language)
    lines = LineIndex(text)
    if start_line < 1 or end_line < start_line or end_line > lines.line_count:
        raise ValueError(
            f"line range {start_line}-{end_line} is not inside the file (lines 1-{lines.line_count})"
        )
    start = lines.line_start(start_line - 1)
    end = lines.line_end(end_line - 1, with_break=True)
    replaced = text[start:end]
    n_masks = math.ceil(count_tokens(replaced, tokenizer) * REGENERATE_SLACK) + REGENERATE_EXTRA
    kind = "line" if start_line == end_line else "block"
    return Spot(start, end, n_masks, kind, _cut_warning(text, start, end, spec, lines))


def count_tokens(text: str, tokenizer: Any = None) -> int:
    if tokenizer is None:
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    return len(tokenizer.encode(text, add_special_tokens=False))


def _cut_warning(text: str, start: int, end: int, spec: LanguageSpec, lines: LineIndex) -> str | None:
    """Name the node that [start, end) cuts through, if any.

    The range is clean when it is a union of whole children of the smallest node that holds it and
    that node is a sequence (`spec.containers`: consecutive statements of a module or a body), or
    when it is that whole node (a whole function). A function's header without its body is a cut.
    """
    segment = text[start:end]
    stripped = segment.strip()
    if not stripped or not spec.has_grammar:
        return None
    inner_start = start + (len(segment) - len(segment.lstrip()))
    inner_end = inner_start + len(stripped)
    bytemap = ByteMap(text)
    low, high = bytemap.to_byte(inner_start), bytemap.to_byte(inner_end)
    tree = spec.parse(text)
    holder = tree.root_node.descendant_for_byte_range(low, high)
    if holder is None or (holder.start_byte == low and holder.end_byte == high):
        return None
    for child in holder.children:
        if child.end_byte <= low or child.start_byte >= high:
            continue
        if low <= child.start_byte and child.end_byte <= high:
            continue
        return _describe(child if child.is_named else holder, bytemap, lines)
    if holder.type in spec.containers or holder.type in spec.strings or holder.type in spec.comments:
        return None
    return _describe(holder, bytemap, lines)


def _describe(node: Any, bytemap: ByteMap, lines: LineIndex) -> str:
    first = lines.line_of(bytemap.to_offset(node.start_byte)) + 1
    last = lines.line_of(bytemap.to_offset(max(node.end_byte - 1, node.start_byte))) + 1
    article = "an" if node.type[:1] in "aeiou" else "a"
    return f"the range cuts through {article} {node.type} (lines {first}-{last})"
