"""One context builder per project, for front doors that see files of several projects."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infill.context.builder import ContextBuilder, RepoContext, usable_budget
from infill.context.recent import RecentRing
from infill.languages import LanguageSpec


class Builders:
    """The builders of one tokenizer and budget, one per project root (None: files outside any project),
    made on first use: the CLI's and `refactor`'s, and the language server's (`lsp_server.repo_context`)."""

    def __init__(self, tokenizer: Any, max_length: int, budget: int, excludes: Sequence[str] = ()) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.budget = usable_budget(budget, max_length)
        self.excludes = tuple(excludes)
        self.by_root: dict[Path | None, ContextBuilder] = {}

    def get(self, root: Path | None, ring: RecentRing | None = None) -> ContextBuilder:
        builder = self.by_root.get(root)
        if builder is None:
            builder = self.by_root[root] = ContextBuilder(root, self.tokenizer, budget=self.budget,
                                                          excludes=self.excludes, max_length=self.max_length,
                                                          ring=ring)
        return builder

    def build(self, root: Path | None, path: str | Path | None, text: str, offset: int,
              language: str | LanguageSpec) -> RepoContext:
        return self.get(root).build(path, text, offset, language)
