"""What infill needs to know about one programming language, and how a language is found.

The record is `infill.language_spec.LanguageSpec`; the rows live in `infill.language_table`: adding a language is one `LanguageSpec` row there plus its
grammar wheel in pyproject.toml. Nothing else in infill, lsp_server or the editors names a language.
A language with no row (or a row without a grammar: `PLAIN_TEXT`) still gets line completions; it has no
parse check, and `infill.fill` says so in its notes.
"""

from __future__ import annotations

import os

from infill.language_spec import PLAIN_TEXT, LanguageSpec, Scoping, UnsupportedLanguage
from infill.language_table import ROWS

__all__ = ["LANGUAGES", "PLAIN_TEXT", "LanguageSpec", "Scoping", "UnsupportedLanguage", "editor_language_ids",
           "get_language", "language_for_file", "language_for_path", "language_or_plain"]

LANGUAGES: dict[str, LanguageSpec] = {spec.id: spec for spec in (*ROWS, PLAIN_TEXT)}
_BY_NAME: dict[str, LanguageSpec] = {name: spec for spec in LANGUAGES.values() for name in spec.names}


def editor_language_ids() -> list[str]:
    """Every name the server completes by default: each row's id and editor ids (plain text excluded)."""
    return [name for spec in LANGUAGES.values() if spec is not PLAIN_TEXT for name in spec.names]


def get_language(language: str | LanguageSpec) -> LanguageSpec:
    """The row named `language` (an id, an LSP languageId or a Neovim filetype)."""
    if isinstance(language, LanguageSpec):
        return language
    try:
        return _BY_NAME[language]
    except KeyError:
        known = ", ".join(sorted(LANGUAGES))
        raise UnsupportedLanguage(f"unsupported language {language!r} (known: {known})") from None


def language_or_plain(language: str | LanguageSpec) -> LanguageSpec:
    """The row named `language`, or `PLAIN_TEXT` for a name with none (line completions, no parse check)."""
    try:
        return get_language(language)
    except UnsupportedLanguage:
        return PLAIN_TEXT


def language_for_path(path: str | os.PathLike[str]) -> LanguageSpec:
    """The language of a file by its extension; `UnsupportedLanguage` names the file otherwise."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    for spec in LANGUAGES.values():
        if suffix in spec.extensions:
            return spec
    raise UnsupportedLanguage(f"{os.fspath(path)}: unsupported language (extension {suffix or 'none'!r})")


def language_for_file(path: str | os.PathLike[str], override: str | None = None) -> LanguageSpec:
    """What the CLI uses for a file it was given: `override` (a name; an unknown one is an error), else the
    language of its extension, else `PLAIN_TEXT`."""
    if override:
        return get_language(override)
    try:
        return language_for_path(path)
    except UnsupportedLanguage:
        return PLAIN_TEXT
