"""One programming language as infill sees it: `LanguageSpec`, a row of the language table
(`infill.language_table`), with its grammar and what the window planner and post-processing reason about."""

from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass

import tree_sitter

from infill.parse_cache import ParseCache

_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Scoping:
    """How a language binds names, for the scope check of a regenerated range (`infill.scope`).

    - `bindings`: a tree-sitter query whose captures are `@name` (a name bound in the innermost scope
      around it), `@hoisted` (bound in the innermost function scope: JavaScript's `var`), `@outer` (a
      declaration's own name, bound in the scope around the declaration, which is captured as `@binding`:
      `def f`, `function f`), `@pattern` (a destructuring pattern or a declarator: every name in it;
      `@hoisted_pattern` likewise hoisted), `@binding` (the node at whose end the match's names are bound,
      so `x = x + 1` reads the old `x`; each name's own end without it) and `@skip` (names that neither
      bind nor read: an attribute, a keyword argument, a module path);
    - `names`: node types of a name, bound or read (`identifier`);
    - `patterns`: node types a `@pattern` is walked through to its names, except for children in the
      fields `unwalked` (default values, array sizes, a pattern's type);
    - `functions` and `blocks`: node types that open a scope: a function's (parameters, `var`, and every
      binding of a language without block scope) and a block's (`let`, `const`, a local variable);
      `closed`: scopes that do not see the bindings around them (Ruby's `def`, PHP's `function`).
    """

    bindings: str
    names: frozenset[str]
    patterns: frozenset[str] = frozenset()
    unwalked: frozenset[str] = frozenset({"right"})
    functions: frozenset[str] = frozenset()
    blocks: frozenset[str] = frozenset()
    closed: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LanguageSpec:
    """One language: its grammar and what the window planner and post-processing reason about.

    - `language_ids`: the names editors use for it besides `id` (LSP languageIds, Neovim filetypes);
    - `block_header_end`: tokens that end a line opening a body (`:` in Python, `{` in C-like languages,
      `then`/`do` in Lua, Ruby and Bash); `block_header_start`: tokens that open a body when they start
      a line (Ruby `def`, Lua `function`), for bodies that a keyword closes; `block_closers`: those
      keywords (`end`, `fi`, `done`): a block completion may write its own, on the line that leaves it;
    - `function_keywords`: tokens of a header whose body is a whole function or class (a longer window);
    - `statements`: node types that make up a body (a statement that ends at the cursor is complete);
      `strings` and `comments`: inside them completion keeps to the end of the line; `containers`: the
      sequences (file, body) whose consecutive children a line range may replace without cutting anything;
    - `function_patterns`: tree-sitter patterns capturing a function's `@name` and `@body`
      (`refactor --function-regex`);
    - `line_only`: data files (JSON, YAML, TOML): completions are single lines, never blocks;
    - `real_parser`: the language's own parser, where one is at hand (`infill.parsing.REAL_PARSERS`: "ast"
      for Python), which judges whether a filled file parses instead of the tree-sitter grammar;
    - `empty_statement`: what stands in for a hole marker when deciding whether a file parsed before it was
      filled (`pass` in Python, `:` in Bash, where a body cannot be empty; `;` in brace languages; ""
      elsewhere);
    - `stand_in_lines`: other lines that may stand where one is missing (a hole marker, the blank line a
      cursor is on): ones that open what follows one level deeper, a block (`if True:`, `try:` in Python)
      or a bracket (`_ = {`), and in brace languages ones that continue or close a block (`} else {`, `}`);
    - `header_keywords`: where every line that opens a block starts with one of a few keywords (Python's
      compound statements), those keywords: a line that must open a block is held to them
      (`infill.line_shape`); empty where other lines may open one (`xs.map(x => {`);
    - `scoping`: how it binds names (`Scoping`), for the check that a regenerated range still defines
      the names the code after it reads (`infill.scope`); None: no scope check;
    `grammar_module` None means no grammar: line windows only and no parse check.
    """

    id: str
    grammar_module: str | None
    extensions: tuple[str, ...]
    comment_prefix: str
    language_ids: tuple[str, ...] = ()
    block_header_end: frozenset[str] = frozenset({"{"})
    block_header_start: frozenset[str] = frozenset()
    block_closers: frozenset[str] = frozenset()
    function_keywords: frozenset[str] = frozenset()
    statements: frozenset[str] = frozenset()
    strings: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})
    containers: frozenset[str] = frozenset()
    function_patterns: tuple[str, ...] = ()
    line_only: bool = False
    grammar_function: str = "language"
    real_parser: str | None = None
    empty_statement: str = ""
    stand_in_lines: tuple[str, ...] = ()
    header_keywords: frozenset[str] = frozenset()
    scoping: Scoping | None = None

    @property
    def has_grammar(self) -> bool:
        return self.grammar_module is not None

    @property
    def names(self) -> tuple[str, ...]:
        """Every name an editor or a user may give this language: the id first."""
        return (self.id, *self.language_ids)

    @property
    def language(self) -> tree_sitter.Language:
        return _load_grammar(*self._grammar())

    def parser(self) -> tree_sitter.Parser:
        return tree_sitter.Parser(self.language)

    def parse(self, text: str) -> tree_sitter.Tree:
        """The tree of `text`, parsed incrementally against a recent text of this language (see
        parse_cache.py); shared, so callers must not edit it."""
        return _parse_cache(*self._grammar()).parse(text.encode("utf-8"))

    def _grammar(self) -> tuple[str, str]:
        if self.grammar_module is None:
            raise UnsupportedLanguage(f"{self.id} has no grammar (plain-text completion only)")
        return self.grammar_module, self.grammar_function

    def opens_block(self, line: str) -> bool:
        """Whether a line of code (without a trailing comment) opens a body on the lines below it: it
        ends with a `block_header_end` token, or starts with a `block_header_start` token (the first or
        second token: Lua's `local function`) and does not end with a closer."""
        if self.line_only:
            return False
        tokens = _TOKEN.findall(line)
        if not tokens:
            return False
        if tokens[-1] in self.block_header_end:
            return True
        if tokens[-1] in self.block_closers:
            return False
        return any(token in self.block_header_start for token in tokens[:2])

    def header_is_function(self, line: str) -> bool:
        return bool(self.function_keywords & set(_TOKEN.findall(line)))


@functools.cache
def _parse_cache(module_name: str, function_name: str) -> ParseCache:
    return ParseCache(_load_grammar(module_name, function_name))


@functools.cache
def _load_grammar(module_name: str, function_name: str) -> tree_sitter.Language:
    module = importlib.import_module(module_name)
    return tree_sitter.Language(getattr(module, function_name)())


class UnsupportedLanguage(ValueError):
    """Raised for a language name or file extension with no row, where a row is required."""


PLAIN_TEXT = LanguageSpec(
    id="plaintext", grammar_module=None, extensions=(), comment_prefix="#", language_ids=("text",),
    block_header_end=frozenset(), comments=frozenset(),
)
