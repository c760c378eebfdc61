"""Repository headers for training windows, built by the product's own context builder (infill.context).

Each corpus package is laid out on disk (corpus_cache/trees/PACKAGE/PATH, written by training.corpus) so
that `ContextBuilder` resolves a file's imports to its sibling modules exactly as it does in a user's
project. Per window: a fresh builder rooted at the package, told that the user recently looked at a few
other files of the same folder (`saw`, the ring of recent chunks), then `build` for the cursor: the
imported definitions (Python), the recent chunks most similar to the cursor's lines, and the file's own
outline beyond the window, trimmed to the budget the product uses.

Gaps are then chosen where the header helps: a gap whose middle names something the header holds and the
text above the gap does not is taken first, so the model learns to read the header.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Any

from infill.context import ContextBuilder
from infill.context.builder import DEFAULT_TOKENS
from training.gaps import Corpus

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
SIBLINGS = 3


def tree_path(root: Path, package: str, path: str) -> Path:
    """Where a corpus file is laid out: one folder per package (`:` of npm:/debian: names made safe)."""
    return root / package.replace(":", "_").replace("/", "_") / path


class Headers:
    def __init__(self, corpus: Corpus, trees: Path, tokenizer: Any, budget: int = DEFAULT_TOKENS,
                 max_length: int = 1024) -> None:
        self.corpus = corpus
        self.trees = trees
        self.tokenizer = tokenizer
        self.budget = budget
        self.max_length = max_length
        self.folders: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, (package, path) in enumerate(zip(corpus.packages, corpus.paths)):
            self.folders[(package, str(PurePosixPath(path).parent))].append(i)

    def header(self, index: int, offset: int, rng: random.Random) -> str:
        """The header for a cursor at `offset` of corpus file `index` ("" when nothing fits or relates)."""
        package, path = self.corpus.packages[index], self.corpus.paths[index]
        root = tree_path(self.trees, package, "")
        here = tree_path(self.trees, package, path)
        if not here.is_file():
            return ""
        builder = ContextBuilder(root, self.tokenizer, budget=self.budget, max_length=self.max_length)
        siblings = [i for i in self.folders[(package, str(PurePosixPath(path).parent))] if i != index]
        for other in rng.sample(siblings, min(SIBLINGS, len(siblings))):
            text = self.corpus.texts[other]
            builder.saw(tree_path(self.trees, package, self.corpus.paths[other]), text,
                        rng.randrange(max(1, text.count("\n"))))
        text = self.corpus.texts[index]
        return builder.build(here, text, offset, self.corpus.languages[index]).header


def header_names(header: str, above: str) -> frozenset[str]:
    """Names the header holds that the text above the gap does not: what only the header can tell."""
    return frozenset(_NAME.findall(header)) - frozenset(_NAME.findall(above))


def uses_header(middle: str, names: frozenset[str]) -> bool:
    return any(name in names for name in _NAME.findall(middle))
