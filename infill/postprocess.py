"""Generated span -> text that fits its spot, as ordered filters.

1. `span_ids`: cut the span at its first EOS/pad (the model fills unused slots with them).
2. `shape_text`: drop the moved indentation (canvas `Slot.lead`), keep one line for a "line" spot (unless
   that line opens a block and nothing follows the cursor: then its body too, `line_may_grow`), stop a
   block completion at the first line that leaves the window's indentation scope, keeping what
   closes the block on that line (`}`, `end`; a regenerated
   range at the first line indented less than the lines it replaces), cut a line repeated three times
   in a row, and end a regenerated range with the same line breaks (blank lines included) as the text
   it replaces.
3. `trim_suffix_echo`: cut the result where it starts repeating the lines right after the spot.
4. `balance_brackets`: stop at the first closer that would close a bracket the text after the spot
   already closes (or that matches nothing); `settle_closer` does the same for a closing keyword.
5. `drop_reason` (`infill.worth_showing`): a result that is empty, only repeats the text after the spot,
   or (for an insertion) starts by repeating the line above is dropped.
6. `match_indentation`: re-indent the result's lines with the file's style (tabs or N spaces).
Filters only cut the result's tail, re-indent, or append line breaks, so each line of the result is a
line of the decoded span: `Shaped.raw_offset` maps a parse error in the result back to the span's
tokens for re-masking (repair.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from infill.canvas import Slot, Specials
from infill.languages import LanguageSpec
from infill.positions import ByteMap
from infill.spots import Spot
from infill.syntax import CLOSERS, OPENERS, bracket_tokens, open_brackets

_INDENT = re.compile(r"[ \t]*")
_BRACKET_CLOSE = re.compile(r"[ \t]*[)\]}]+[;,]?")
SPACES_PER_LEVEL = 4


@dataclass(frozen=True)
class Shaped:
    """The text for a spot and where it starts in the decoded span (`raw`)."""

    text: str
    raw: str
    raw_start: int

    def raw_offset(self, where: int) -> int:
        """The offset in `raw` of `text[where]`: same line, same column after the indentation
        (re-indenting changes only the indentation of a line)."""
        line = self.text.count("\n", 0, where)
        column = where - (self.text.rfind("\n", 0, where) + 1)
        start = self.raw_start
        for _ in range(line):
            found = self.raw.find("\n", start)
            if found == -1:
                return len(self.raw)
            start = found + 1
        end = self.raw.find("\n", start)
        end = len(self.raw) if end == -1 else end
        text_line = self.text[where - column :].split("\n", 1)[0]
        raw_line = self.raw[start:end]
        text_indent = len(text_line) - len(text_line.lstrip(" \t"))
        raw_indent = len(raw_line) - len(raw_line.lstrip(" \t"))
        return min(start + raw_indent + max(column - text_indent, 0), end)


def span_ids(ids: list[int] | tuple[int, ...], special: Specials) -> list[int]:
    kept: list[int] = []
    for token in ids:
        if token in (special.eos_id, special.pad_id):
            break
        if token not in (special.mask_id, special.bos_id):
            kept.append(token)
    return kept


def whole_lines(ids: list[int], line_breaks: frozenset[int]) -> list[int]:
    """`ids` up to the last token that holds a line break (none: nothing): what a span that ran out of room
    wrote before the line it was cut in."""
    last = max((i for i, token in enumerate(ids) if token in line_breaks), default=-1)
    return ids[: last + 1]


def decode(tokenizer: Any, ids: list[int]) -> str:
    return str(tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))


def token_offsets(tokenizer: Any, ids: list[int]) -> list[int]:
    """Start offset of each token in `decode(ids)` (prefix decoding, so merged bytes stay right)."""
    return [len(decode(tokenizer, ids[:index])) for index in range(len(ids))]


def _indent_width(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip(" "))


def shape_text(raw: str, slot: Slot, text: str, spec: LanguageSpec) -> Shaped:
    spot = slot.spot
    begin = 0
    if slot.lead:
        if raw.startswith(slot.lead):
            begin = len(slot.lead)
        else:
            begin = len(_INDENT.match(raw).group(0))  # type: ignore[union-attr]
    body = raw[begin:]
    if spot.start == spot.end:
        first = body.split("\n", 1)[0].rstrip("\r")
        scope_line = None
        if spot.kind == "line":
            if "\n" not in body or not opens_grown_block(first, spot, text, spec):
                return Shaped(first, raw, begin)
            scope_line = _cursor_line(text, spot.start) + first
        body = match_indentation(_cut_repetition(body), indent_unit(text), first_line_fixed=True)
        return Shaped(_limit_scope(body, slot, text, spec, scope_line), raw, begin)
    replaced = text[spot.start : spot.end]
    at_line_start = spot.start == 0 or text[spot.start - 1] == "\n"
    before = text[text.rfind("\n", 0, spot.start) + 1 : spot.start]
    body = _cut_repetition(body)
    if not before.strip():  # whole lines, or a hole marker after its indentation
        body = _below_indent(body, _min_indent(before + replaced))
    body = match_indentation(body.rstrip(), indent_unit(text), not at_line_start)
    if body:
        body += replaced[len(replaced.rstrip("\r\n")) :]
    return Shaped(body, raw, begin)


def _cut_repetition(body: str, limit: int = 3) -> str:
    """Keep one copy of a non-blank line that repeats `limit` times in a row (a model stuck in a loop)."""
    lines = body.split("\n")
    run = 1
    for index in range(1, len(lines)):
        current = lines[index].strip()
        run = run + 1 if current and current == lines[index - 1].strip() else 1
        if run == limit:
            return "\n".join(lines[: index - limit + 2])
    return body


def _min_indent(text: str) -> int:
    widths = [_indent_width(line) for line in text.split("\n") if line.strip()]
    return min(widths) if widths else 0


def _below_indent(body: str, indent: int) -> str:
    """Cut a regenerated range of whole lines before its first line, after the first written one,
    indented less than the lines it replaces (a model writing on past the end of the block the range
    belongs to)."""
    lines = body.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    for index in range(first + 1, len(lines)):
        if lines[index].strip() and _indent_width(lines[index]) < indent:
            return "\n".join(lines[:index])
    return body


def _cursor_line(text: str, offset: int) -> str:
    return text[text.rfind("\n", 0, offset) + 1 : offset]


def line_may_grow(spot: Spot, text: str, spec: LanguageSpec) -> bool:
    """Whether a line insertion may go on into a block when its line opens one: a grammar that has blocks,
    and nothing but blanks after the cursor on its line (a multi-line completion cannot end mid-line)."""
    if spot.kind != "line" or spot.start != spot.end or not spec.has_grammar or spec.line_only:
        return False
    line_end = text.find("\n", spot.start)
    return not text[spot.start : len(text) if line_end == -1 else line_end].strip()


def opens_grown_block(first: str, spot: Spot, text: str, spec: LanguageSpec) -> bool:
    """Whether a line insertion's first line `first` (after the cursor) makes its line open a block that the
    completion should carry (`line_may_grow`): not when the next non-blank line below is indented deeper
    than it, for that line already is the body (a block's header line written again above its body)."""
    line = _cursor_line(text, spot.start) + first
    if not line_may_grow(spot, text, spec) or not spec.opens_block(line):
        return False
    line_end = text.find("\n", spot.start)
    below = next((x for x in text[line_end + 1 :].split("\n") if x.strip()), "") if line_end != -1 else ""
    return _width(below) <= _width(line)


def _width(line: str) -> int:
    expanded = line.expandtabs(8)
    return len(expanded) - len(expanded.lstrip(" "))


def _limit_scope(body: str, slot: Slot, text: str, spec: LanguageSpec, scope_line: str | None = None) -> str:
    """Cut a block completion before the first line indented less than the window's scope: deeper than
    the cursor's line when that line opens a block (`LanguageSpec.opens_block`), else as deep. A blank
    cursor line takes its scope from the last non-blank line above it (an editor user on an empty line
    inside a body); a line insertion that opens a block (`scope_line`, the whole line) scopes its own body.
    The line that leaves the scope keeps what closes the block (`}`, `});`, `end`, `fi`): a block may close
    its own braces; `balance_brackets` and `settle_closer` drop a closer that the text after the spot
    already has."""
    spot = slot.spot
    line_start = text.rfind("\n", 0, spot.start) + 1
    cursor_line = text[line_start : spot.start] if scope_line is None else scope_line
    while not cursor_line.strip() and line_start > 0:
        previous = text.rfind("\n", 0, line_start - 1) + 1
        cursor_line = text[previous : line_start - 1]
        line_start = previous
    scope = _indent_width(cursor_line)
    if spec.opens_block(cursor_line):
        scope += 1
    lines = body.split("\n")
    kept = [lines[0]]
    for line in lines[1:]:
        if line.strip() and _indent_width(line) < scope:
            closer = _closing_part(line, spec)
            if closer and _indent_width(line) == scope - 1:
                kept.append(closer)
            break
        kept.append(line)
    return "\n".join(kept).rstrip()


def _closing_part(line: str, spec: LanguageSpec) -> str:
    """The part of `line` that closes a block: its leading closing brackets (with a `;` or `,` after them),
    or its first word when that is one of the language's block closers; "" otherwise."""
    match = _BRACKET_CLOSE.match(line)
    if match and "}" in match.group(0):
        return match.group(0).rstrip()
    words = line.split()
    if words and words[0] in spec.block_closers:
        return line[: len(line) - len(line.lstrip())] + words[0]
    return ""


def settle_closer(text: str, start: int, end: int, new_text: str, spec: LanguageSpec) -> str:
    """Drop a final line that is only a block closer of the row (`end`, `fi`, bash's `}`) when the text after
    the spot already closes the block the spot is in. Grammars such as Ruby's and Bash's parse a stray `end`
    or `}` as a name, so the parse check alone would not notice a second one."""
    lines = new_text.rstrip().split("\n")
    if len(lines) < 2 or lines[-1].strip() not in spec.block_closers or not spec.has_grammar:
        return new_text
    if _closed_after(text, start, end, spec):
        return "\n".join(lines[:-1]).rstrip()
    return new_text


def _closed_after(text: str, start: int, end: int, spec: LanguageSpec) -> bool:
    """Whether the innermost node around [start, end) that ends with one of the row's block closers ends
    with a real one (the parser wrote a MISSING closer, or none at all, for a block left open)."""
    bytemap = ByteMap(text)
    low, high = bytemap.to_byte(start), bytemap.to_byte(end)
    node = spec.parse(text).root_node.descendant_for_byte_range(low, high)
    while node is not None:
        if node.start_byte < low and node.end_byte >= high and node.child_count:
            last = node.children[-1]
            if last.type in spec.block_closers:
                return not last.is_missing and last.start_byte >= high
        node = node.parent
    return False


def trim_suffix_echo(new_text: str, suffix: str, spec: LanguageSpec | None = None) -> str:
    """Cut the result where it starts repeating the lines right after the spot: a model that does not
    end a gap by itself writes on into the text that follows it (the first non-blank line after the spot,
    or the first two when that line is short enough to be common, e.g. `return x`, unless the result
    ends after the first)."""
    result_lines = new_text.split("\n")
    target = echo_target(suffix, spec)
    if not target:
        return new_text
    need = len(target)
    for start in range(len(result_lines)):
        rest = [line.strip() for line in result_lines[start:] if line.strip()]
        # the whole target, or all that is left of the result when it stops part-way through the target
        if rest and result_lines[start].strip() and rest[:need] == target[: len(rest[:need])]:
            return "\n".join(result_lines[:start]).rstrip()
    return new_text


def echo_target(suffix: str, spec: LanguageSpec | None = None) -> list[str]:
    """The stripped lines whose repetition counts as writing into the text after a spot (trim_suffix_echo).
    Lines that only close blocks (`}`, `});`, `end`) are passed over: a block the result opens closes with
    the same line, and `balance_brackets` / `settle_closer` deal with closers."""
    closers = spec.block_closers if spec is not None else frozenset()
    following = [line.strip() for line in suffix.split("\n") if line.strip()]
    while following and (_BRACKET_CLOSE.fullmatch(following[0]) or following[0] in closers):
        following.pop(0)
    if not following:
        return []
    return following[: 1 if len(following[0]) >= 24 or len(following) == 1 else 2]


def balance_brackets(text: str, start: int, end: int, new_text: str, spec: LanguageSpec) -> str:
    """Cut `new_text` before the first closer the surrounding text does not leave room for."""
    if not spec.has_grammar or not any(char in CLOSERS for char in new_text):
        return new_text
    filled = text[:start] + new_text + text[end:]
    tree = spec.parse(filled)
    bytemap = ByteMap(filled)
    low, high = bytemap.to_byte(start), bytemap.to_byte(start + len(new_text))
    outer = open_brackets(tree, low)
    suffix_closes = 0
    depth = 0
    for _, char in bracket_tokens(tree, high, len(filled.encode("utf-8"))):
        if char in OPENERS:
            depth += 1
        elif depth:
            depth -= 1
        else:
            suffix_closes += 1
    room = max(len(outer) - suffix_closes, 0)
    own: list[str] = []
    closed = 0
    for byte, char in bracket_tokens(tree, low, high):
        if char in OPENERS:
            own.append(char)
            continue
        if own and own[-1] == CLOSERS[char]:
            own.pop()
        elif not own and closed < room and outer[len(outer) - 1 - closed].char == CLOSERS[char]:
            closed += 1
        else:
            return new_text[: bytemap.to_offset(byte) - start].rstrip()
    return new_text


def finish(raw: str, slot: Slot, text: str, spec: LanguageSpec) -> tuple[Shaped, str]:
    """Filters 2-4 in order: the decoded span `raw` -> (its shape, the text for the spot). A regenerated
    range that a filter cut keeps the line breaks that ended what it replaces, and an insertion at the start
    of a line that holds text ends with a line break: the result must not merge with the line after it
    (with the spot at column 0 of the line after a gap, the published oracle-length setup, 150 of 300
    HumanEval single-line fills were dropped as not parsing for want of it)."""
    shaped = shape_text(raw, slot, text, spec)
    spot = slot.spot
    new_text = trim_suffix_echo(shaped.text, text[spot.end :], spec)
    new_text = balance_brackets(text, spot.start, spot.end, new_text, spec)
    new_text = settle_closer(text, spot.start, spot.end, new_text, spec)
    replaced = text[spot.start : spot.end]
    ending = replaced[len(replaced.rstrip("\r\n")) :]
    at_line_start = text.rfind("\n", 0, spot.start) + 1 == spot.start
    if not ending and spot.start == spot.end and at_line_start and text[spot.end :].split("\n", 1)[0].strip():
        ending = "\n"
    if ending and new_text.strip() and not new_text.endswith(ending):
        new_text = new_text.rstrip() + ending
    return shaped, new_text


def indent_unit(text: str) -> str | None:
    """The file's indentation: "\t", or the smallest space indent (2-8), or None when nothing is indented."""
    tabs = spaces = 0
    smallest = 0
    for line in text.split("\n"):
        if line.startswith("\t"):
            tabs += 1
        elif line.startswith(" ") and line.strip():
            spaces += 1
            width = len(line) - len(line.lstrip(" "))
            smallest = width if not smallest else min(smallest, width)
    if tabs == spaces == 0:
        return None
    return "\t" if tabs > spaces else " " * min(max(smallest, 2), 8)


def match_indentation(body: str, unit: str | None, first_line_fixed: bool) -> str:
    """Re-indent lines indented in the other style (tabs in a space-indented file or the reverse).

    Spaces become tabs at SPACES_PER_LEVEL spaces a level (PEP 8; what code models write)."""
    if unit is None:
        return body
    lines = body.split("\n")
    own_unit = SPACES_PER_LEVEL
    for index, line in enumerate(lines):
        if (index == 0 and first_line_fixed) or not line.strip():
            continue
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if unit == "\t" and " " in indent:
            width = len(indent.expandtabs(own_unit))
            lines[index] = "\t" * (width // own_unit) + " " * (width % own_unit) + line[len(indent) :]
        elif unit != "\t" and "\t" in indent:
            lines[index] = indent.replace("\t", unit) + line[len(indent) :]
    return "\n".join(lines)
