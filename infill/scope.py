"""One level above parsing: a regenerated range must not unbind a name that the code after it reads.

A result can parse and still break the file: two regenerated lines that bound `partialName` and
`partialPath` came back as a plausible `if (lastSlashIdx === -1) { return [] }`, and the lines below went
on reading names that nothing defined any more. For a language whose row says how it binds names
(`LanguageSpec.scoping`), `scope_reads` finds, in the original, every read after a range that resolves to
a binding inside the range; `unresolved` then asks, of the filled document, whether each such read (in
text the fill left as it was) still resolves to a binding: one the new text makes, or one before the range.

Resolution is lexical and kept simple, so that it refuses only what it can see: a read resolves in the
innermost scope around it (a function's or a block's, by the row's node types) that binds its name, to the
last binding there that took effect before the read (`x = x + 1` binds at its end, so it reads the old
`x`). A scope whose bindings of the name all come later (a hoisted function, a Python local assigned
further down) resolves the read to something this check does not judge: such a read is never required.
Names bound inside a function that ends inside the range are that function's, so no read after the range
resolves to them; a read shadowed by a nested scope's own binding resolves there. Names read from
builtins or other files resolve to nothing in either text, so they are never required either.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import tree_sitter

from infill.language_spec import LanguageSpec, Scoping
from infill.positions import ByteMap, LineIndex
from infill.spots import Spot


@dataclass(frozen=True)
class Read:
    """A read after the range [start, end) (str offsets of the original) of a name bound inside it:
    `offset` where the read starts, `line` its 1-based line."""

    start: int
    end: int
    name: str
    offset: int
    line: int


NOTE_START = "dropped, the result no longer defines "


@dataclass(frozen=True)
class Unbound:
    """A name a fill left unbound, and the 1-based line (of the original) of the first read of it."""

    name: str
    line: int

    def note(self) -> str:
        return f"{NOTE_START}{self.name}, which line {self.line} reads"


@dataclass(frozen=True)
class _Binding:
    name: str
    start: int
    scope: int
    """The id of the scope node it binds in (the root's for the file)."""
    effect: int
    """The byte from which it is bound."""
    declared: bool = False
    """A declaration's own name (`@outer`: a function, a class), which some languages hoist."""


_LATER = "later"
"""Resolution of a read whose innermost binding scope binds its name only after it."""

NAME_CAPTURES = ("name", "hoisted", "outer")
PATTERN_CAPTURES = ("pattern", "hoisted_pattern")


@functools.cache
def _queries(spec: LanguageSpec) -> tuple[tree_sitter.Query, tree_sitter.Query]:
    """The row's binding query and a query for every name node."""
    scoping = _scoping(spec)
    reads = "[" + " ".join(f"({kind})" for kind in sorted(scoping.names)) + "] @read"
    return tree_sitter.Query(spec.language, scoping.bindings), tree_sitter.Query(spec.language, reads)


def _scoping(spec: LanguageSpec) -> Scoping:
    if spec.scoping is None:
        raise ValueError(f"{spec.id} has no scoping rules")
    return spec.scoping


class _Index:
    """Every binding of one tree, by name, and the name nodes that are not reads (bindings, skips)."""

    def __init__(self, tree: tree_sitter.Tree, spec: LanguageSpec, within: tuple[int, int] | None = None) -> None:
        """`within`: only the matches that touch that byte range (what a range binds, to skip the rest when
        it binds nothing: the whole tree's matches cost 0.25 s on a file of 15,000 lines)."""
        self.tree = tree
        self.scoping = _scoping(spec)
        self._kinds = self.scoping.functions | self.scoping.blocks
        self.root = tree.root_node
        self.by_name: dict[str, list[_Binding]] = {}
        self.not_reads: set[int] = set()
        bindings, _ = _queries(spec)
        cursor = tree_sitter.QueryCursor(bindings)
        if within is not None:
            cursor.set_byte_range(*within)
        for _, captures in cursor.matches(self.root):
            declaration = captures["binding"][0] if "binding" in captures else None
            for node in captures.get("skip", []):
                self.not_reads.add(node.start_byte)
            for kind in (*NAME_CAPTURES, *PATTERN_CAPTURES):
                for top in captures.get(kind, []):
                    for node in self._walk(top) if kind in PATTERN_CAPTURES else [top]:
                        self._add(node, kind, declaration)

    def _walk(self, node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
        """The names in a destructuring pattern (not in its default values)."""
        if node.type in self.scoping.names:
            yield node
            return
        if node.type not in self.scoping.patterns:
            return
        for index, child in enumerate(node.children):
            if node.field_name_for_child(index) not in self.scoping.unwalked:
                yield from self._walk(child)

    def _add(self, node: tree_sitter.Node, kind: str, declaration: tree_sitter.Node | None) -> None:
        self.not_reads.add(node.start_byte)
        if kind == "outer" and declaration is None:
            raise ValueError("an @outer name needs its declaration captured as @binding")
        anchor = declaration if kind == "outer" and declaration is not None else node
        scope = self._scope(anchor, self.scoping.functions if kind.startswith("hoisted") else self._kinds)
        effect = node.end_byte if declaration is None else declaration.end_byte
        self.by_name.setdefault(_text(node), []).append(
            _Binding(_text(node), node.start_byte, scope.id, effect, kind == "outer"))

    def _scope(self, node: tree_sitter.Node, kinds: frozenset[str]) -> tree_sitter.Node:
        """The innermost node of one of `kinds` around `node`, or the root."""
        parent = node.parent
        while parent is not None:
            if parent.type in kinds:
                return parent
            parent = parent.parent
        return self.root

    def chain(self, node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
        """The scopes around a read, innermost first, the root last (or a closed scope)."""
        parent = node.parent
        while parent is not None:
            if parent.type in self._kinds or parent.parent is None:
                yield parent
                if parent.type in self.scoping.closed:
                    return
            parent = parent.parent

    def resolve(self, read: tree_sitter.Node) -> _Binding | str | None:
        """The binding a read resolves to; `_LATER` where its scope binds the name only after it by a
        declaration (hoisted in some languages); None where nothing binds it before the read: not in this
        file, or only later by a variable (Python's UnboundLocalError, JavaScript's `let` before its line)."""
        bindings = self.by_name.get(_text(read), [])
        for scope in self.chain(read):
            here = [b for b in bindings if b.scope == scope.id]
            if here:
                before = [b for b in here if b.effect <= read.start_byte]
                if before:
                    return max(before, key=lambda b: b.effect)
                return _LATER if any(b.declared for b in here) else None
        return None

    def names_bound(self, low: int, high: int) -> set[str]:
        """The names of the bindings whose name lies in [low, high) (bytes)."""
        return {b.name for group in self.by_name.values() for b in group if low <= b.start < high}

    def is_read(self, node: tree_sitter.Node) -> bool:
        return node.type in self.scoping.names and node.start_byte not in self.not_reads


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def scope_reads(text: str, spec: LanguageSpec, spots: Sequence[Spot]) -> tuple[Read, ...]:
    """For each spot that replaces text: the reads after it that resolve to a binding inside it. None at
    all for a language without scoping rules, or a document whose tree has an error (a tree that recovered
    from one may bind what the code does not)."""
    ranges = [s for s in spots if s.end > s.start]
    if spec.scoping is None or not spec.has_grammar or not ranges:
        return ()
    tree = spec.parse(text)
    if tree.root_node.has_error:
        return ()
    bytemap, lines = ByteMap(text), LineIndex(text)
    bounds = [(bytemap.to_byte(s.start), bytemap.to_byte(s.end)) for s in ranges]
    if not any(_Index(tree, spec, (low, high)).names_bound(low, high) for low, high in bounds):
        return ()
    index = _Index(tree, spec)
    _, names = _queries(spec)
    found: list[Read] = []
    for spot, (low, high) in zip(ranges, bounds):
        bound = index.names_bound(low, high)
        if not bound:
            continue
        cursor = tree_sitter.QueryCursor(names)
        cursor.set_byte_range(high, tree.root_node.end_byte)
        for node in cursor.captures(tree.root_node).get("read", []):
            if node.start_byte < high or _text(node) not in bound or not index.is_read(node):
                continue
            target = index.resolve(node)
            if isinstance(target, _Binding) and low <= target.start < high:
                offset = bytemap.to_offset(node.start_byte)
                found.append(Read(spot.start, spot.end, target.name, offset, lines.line_of(offset) + 1))
    return tuple(sorted(found, key=lambda r: (r.start, r.offset)))


def unresolved(filled: str, spec: LanguageSpec, reads: Sequence[tuple[Read, int]]) -> list[bool]:
    """For each (read, its offset in `filled`): whether the filled document leaves it resolving to nothing.
    A read whose node is not where it was (the tree around it changed) or a tree with an error gets no
    verdict (False)."""
    if not reads or spec.scoping is None:
        return [False] * len(reads)
    tree = spec.parse(filled)
    if tree.root_node.has_error:
        return [False] * len(reads)
    index = _Index(tree, spec)
    bytemap = ByteMap(filled)
    verdicts = []
    for read, offset in reads:
        at = bytemap.to_byte(offset)
        node = tree.root_node.named_descendant_for_byte_range(at, at + len(read.name.encode("utf-8")))
        same = node is not None and index.is_read(node) and _text(node) == read.name
        verdicts.append(same and node is not None and index.resolve(node) is None)
    return verdicts
