"""Code from the rest of the workspace for a fill: one `infill.context.ContextBuilder` per project root,
told what the editor has open and where the user edits.

Events arrive on the event loop (`saw`, `closed`) while builders are used on the worker thread, where the
engine's tokenizer is called (a fast tokenizer must not run on two threads at once). So the event loop
only queues what it heard, under a lock, and the worker applies the queue before it builds. Builders are
made on the worker, with the loaded engine's tokenizer and the settings' budget; when either changes, new
ones take over the old ones' rings of recent code and are told the open documents again.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infill.context import Builders, ContextBuilder, RepoContext, repo_root
from infill.context.builder import usable_budget
from infill.context.recent import RecentRing
from infill.languages import LanguageSpec

from .settings import Settings

logger = logging.getLogger(__name__)

MAX_VIEWS = 64
"""Edit positions kept while nothing drains the queue (no engine yet, or context off): the newest ones."""

ContextSource = Callable[[Any, int], str]
"""(engine, offset of the first spot) -> the header of a fill; called on the worker."""


def file_path(uri: str) -> Path | None:
    """The file a `file:` URI names; None for other schemes (an unsaved buffer)."""
    from pygls.uris import to_fs_path, uri_scheme

    if uri_scheme(uri) != "file":
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


@dataclass(frozen=True)
class _View:
    root: Path | None
    text: str


class WorkspaceContext:
    """The language server's project context. `folders()` gives the workspace folders' URIs as they are now
    (pygls keeps them through `workspace/didChangeWorkspaceFolders`); a document outside all of them
    belongs to its own project (`repo_root`), or to none."""

    def __init__(self, folders: Callable[[], list[str]]) -> None:
        self._folders = folders
        self._outside: dict[Path, Path | None] = {}
        self._lock = threading.Lock()
        self._texts: dict[Path, tuple[Path | None, str | None]] = {}
        """Queued: each document's newest text (None: closed) since the worker last looked."""
        self._views: OrderedDict[tuple[Path, int], _View] = OrderedDict()
        """Queued: where the user edited, with the text at that moment (for the ring)."""
        self._open: dict[Path, tuple[Path | None, str]] = {}
        self._builders: Builders | None = None

    # -- the event loop ---------------------------------------------------------------------------

    def root_of(self, path: Path) -> Path | None:
        """The deepest workspace folder holding `path`, else the project the file is in."""
        inside = [folder for folder in (file_path(uri) for uri in self._folders())
                  if folder is not None and path.is_relative_to(folder)]
        if inside:
            return max(inside, key=lambda folder: len(folder.parts))
        if path not in self._outside:
            if len(self._outside) > 1024:
                self._outside.clear()
            self._outside[path] = repo_root(path)
        return self._outside[path]

    def saw(self, uri: str, text: str, line: int | None = None) -> None:
        """A document's current text; `line`: the 0-based line the user just edited."""
        path = file_path(uri)
        if path is None:
            return
        root = self.root_of(path)
        with self._lock:
            self._texts[path] = (root, text)
            if line is not None:
                self._views.pop((path, line), None)
                self._views[(path, line)] = _View(root, text)
                while len(self._views) > MAX_VIEWS:
                    self._views.popitem(last=False)

    def closed(self, uri: str) -> None:
        path = file_path(uri)
        if path is not None:
            with self._lock:
                self._texts[path] = (None, None)

    def source(self, settings: Settings, uri: str, text: str, language: LanguageSpec) -> ContextSource | None:
        """What the worker calls for the header of a fill of `text` (the document at `uri`); None when the
        settings turn context off."""
        if not settings.context or settings.context_tokens == 0:
            return None
        path = file_path(uri)
        root = self.root_of(path) if path is not None else None

        def header(engine: Any, offset: int) -> str:
            try:
                return self._build(engine, settings, root, path, text, offset, language).header
            except Exception:  # the context only helps: a fill without it beats no fill
                logger.exception("building the repository context for %s failed", uri)
                return ""

        return header

    # -- the worker -------------------------------------------------------------------------------

    def _build(self, engine: Any, settings: Settings, root: Path | None, path: Path | None, text: str,
               offset: int, language: LanguageSpec) -> RepoContext:
        builders = self._current(engine, settings)
        self._apply(builders)
        context = builders.build(root, path, text, offset, language)
        if context.chunks and logger.isEnabledFor(logging.DEBUG):
            logger.debug("context for %s, %d tokens:\n  %s", path, context.tokens, "\n  ".join(context.describe()))
        return context

    def _current(self, engine: Any, settings: Settings) -> Builders:
        """The builders for this engine and these settings; new ones keep the old ones' rings."""
        old = self._builders
        if (old is not None and old.tokenizer is engine.tokenizer and old.max_length == engine.max_length
                and old.budget == usable_budget(settings.context_tokens, engine.max_length)
                and old.excludes == tuple(settings.context_files)):
            return old
        new = self._builders = Builders(engine.tokenizer, engine.max_length, settings.context_tokens,
                                        settings.context_files)
        for root, builder in (old.by_root.items() if old is not None else ()):
            self._made(new, root, builder.ring)
        return new

    def _made(self, builders: Builders, root: Path | None, ring: RecentRing | None = None) -> ContextBuilder:
        """The root's builder, told the open documents of its project when it is new."""
        if root in builders.by_root:
            return builders.by_root[root]
        builder = builders.get(root, ring)
        for path, (where, text) in self._open.items():
            if where == root:
                builder.saw(path, text)
        return builder

    def _apply(self, builders: Builders) -> None:
        with self._lock:
            texts, self._texts = self._texts, {}
            views, self._views = self._views, OrderedDict()
        for (path, line), view in views.items():
            self._made(builders, view.root).saw(path, view.text, line)
        for path, (root, text) in texts.items():
            if text is None:
                self._open.pop(path, None)
                for builder in builders.by_root.values():
                    builder.closed(path)
            else:
                self._open[path] = (root, text)
                self._made(builders, root).saw(path, text)
