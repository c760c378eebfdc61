"""The language table: everything infill needs to know about one programming language.

Adding a language is one `LanguageSpec` row in `LANGUAGES` (plus its grammar wheel in pyproject.toml).
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass

import tree_sitter

from infill.parse_cache import ParseCache


@dataclass(frozen=True)
class LanguageSpec:
    """One language: its grammar and the node types the window planner reasons about.

    `block_openers` are statements that end a header line with an opener (`:` in Python) and own an
    indented body; `function_keywords` are the tokens of a header whose body is a whole function or
    class (a longer window); `statements` are the node types that make up a body; `strings` and `comments` are
    the node types inside which completion is restricted to the end of the line; `containers` are the
    sequences (file, body) whose consecutive children a line range may replace without cutting anything.
    """

    id: str
    grammar_module: str
    extensions: tuple[str, ...]
    comment_prefix: str
    block_openers: frozenset[str]
    function_keywords: frozenset[str]
    statements: frozenset[str]
    strings: frozenset[str]
    comments: frozenset[str]
    containers: frozenset[str] = frozenset({"module", "block"})
    block_header_end: str = ":"
    grammar_function: str = "language"

    @property
    def language(self) -> tree_sitter.Language:
        return _load_grammar(self.grammar_module, self.grammar_function)

    def parser(self) -> tree_sitter.Parser:
        return tree_sitter.Parser(self.language)

    def parse(self, text: str) -> tree_sitter.Tree:
        """The tree of `text`, parsed incrementally against a recent text of this language (see
        parse_cache.py); shared, so callers must not edit it."""
        return _parse_cache(self.grammar_module, self.grammar_function).parse(text.encode("utf-8"))


@functools.cache
def _parse_cache(module_name: str, function_name: str) -> ParseCache:
    return ParseCache(_load_grammar(module_name, function_name))


@functools.cache
def _load_grammar(module_name: str, function_name: str) -> tree_sitter.Language:
    module = importlib.import_module(module_name)
    return tree_sitter.Language(getattr(module, function_name)())


_PYTHON_COMPOUND = frozenset(
    {
        "function_definition",
        "class_definition",
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "while_statement",
        "with_statement",
        "try_statement",
        "except_clause",
        "finally_clause",
        "match_statement",
        "case_clause",
        "decorated_definition",
    }
)

LANGUAGES: dict[str, LanguageSpec] = {
    "python": LanguageSpec(
        id="python",
        grammar_module="tree_sitter_python",
        extensions=(".py", ".pyi", ".pyw"),
        comment_prefix="#",
        block_openers=_PYTHON_COMPOUND,
        function_keywords=frozenset({"def", "class"}),
        statements=_PYTHON_COMPOUND
        | frozenset(
            {
                "expression_statement",
                "return_statement",
                "pass_statement",
                "break_statement",
                "continue_statement",
                "raise_statement",
                "import_statement",
                "import_from_statement",
                "assert_statement",
                "global_statement",
                "nonlocal_statement",
                "delete_statement",
                "type_alias_statement",
            }
        ),
        strings=frozenset({"string", "string_content", "concatenated_string"}),
        comments=frozenset({"comment"}),
    ),
}


class UnsupportedLanguage(ValueError):
    """Raised for a language id or file extension with no row in `LANGUAGES`."""


def get_language(language: str | LanguageSpec) -> LanguageSpec:
    if isinstance(language, LanguageSpec):
        return language
    try:
        return LANGUAGES[language]
    except KeyError:
        known = ", ".join(sorted(LANGUAGES))
        raise UnsupportedLanguage(f"unsupported language {language!r} (known: {known})") from None


def language_for_path(path: str | os.PathLike[str]) -> LanguageSpec:
    """The language of a file by its extension; `UnsupportedLanguage` names the file otherwise."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    for spec in LANGUAGES.values():
        if suffix in spec.extensions:
            return spec
    raise UnsupportedLanguage(f"{os.fspath(path)}: unsupported language (extension {suffix or 'none'!r})")
