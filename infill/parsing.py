"""Whether a document parses, by the language's real parser where one is at hand.

tree-sitter recovers from errors a compiler rejects: Python's grammar accepts `if x:` with an empty body,
so a completion that stops after a block opener looked fine to a tree-sitter check while `python` refused
the file. A row that names a `real_parser` is checked with it (`ast` for Python: the compiler's own
parser, no code runs); every other row with its tree-sitter grammar (any ERROR or MISSING node).
"""

from __future__ import annotations

import ast
import threading
import warnings
from collections.abc import Callable

from infill.languages import LanguageSpec
from infill.positions import ByteMap, LineIndex
from infill.syntax import error_points

_AST_LOCK = threading.Lock()
"""One `ast.parse` at a time in this process: CPython 3.11 keeps the AST constructor's recursion depth in
state shared by all threads, so two request threads of the engine server converting trees at once (the
GIL changing hands inside one of them) raise `SystemError: AST constructor recursion depth mismatch`
(python/cpython#106905; seen once in 5,000 fuzzed requests with 8 in flight)."""


def python_first_error(text: str) -> int | None:
    """The str offset of the first syntax error Python's parser reports, or None when `text` parses.

    A file too deep for the parser (RecursionError, MemoryError) or with a null byte counts as parsing here:
    the parser gave no verdict about the code, and the tree-sitter count still runs for such a file."""
    try:
        with _AST_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like are warnings, not errors
            ast.parse(text)
    except SyntaxError as error:
        return _offset_of(text, error.lineno, error.offset)
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _offset_of(text: str, lineno: int | None, column: int | None) -> int:
    """The str offset of a 1-based (line, column) that a SyntaxError names, clamped into the text."""
    lines = LineIndex(text)
    line = min(max((lineno or 1) - 1, 0), lines.line_count - 1)
    start = lines.line_start(line)
    end = lines.line_end(line)
    return min(start + max((column or 1) - 1, 0), end)


REAL_PARSERS: dict[str, Callable[[str], int | None]] = {"ast": python_first_error}
"""`LanguageSpec.real_parser` names: each takes a document and returns its first error's offset or None."""


def first_error(text: str, spec: LanguageSpec) -> int | None:
    """Where `text` first fails to parse in `spec`'s language (a str offset), or None when it parses (also
    for a language without a grammar: nothing can be checked there, which `fill` notes)."""
    if spec.real_parser is not None:
        return REAL_PARSERS[spec.real_parser](text)
    if not spec.has_grammar:
        return None
    tree = spec.parse(text)
    if not tree.root_node.has_error:
        return None
    points = error_points(tree)
    return ByteMap(text).to_offset(points[0]) if points else 0
