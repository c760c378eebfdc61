"""Every document's kept keys and values, as the denoising loop reads and writes them: the in-memory LRU
(`DocCache`) in front of the optional on-disk store (`DocStore`, a language server's documents across
restarts)."""

from __future__ import annotations

from engine.cache.doc_cache import DocCache, DocKV
from engine.cache.doc_store import DocStore


class Documents:
    def __init__(self, store: DocStore | None = None) -> None:
        self.memory = DocCache()
        self.store = store
        self._stored: set[str] = set()  # documents written to the store by this process

    def get(self, doc_id: str) -> DocKV | None:
        """The document's keys/values: from memory, else those a previous process kept on disk."""
        kept = self.memory.get(doc_id)
        if kept is None and self.store is not None:
            kept = self.store.load(doc_id)
            if kept is not None:  # on disk already: written again when the document closes, not on its next request
                self.memory.put(doc_id, kept)
                self._stored.add(doc_id)
        return kept

    def put(self, doc_id: str, kept: DocKV) -> None:
        """Keep `kept` for the document's next request (written to the store the first time in a process)."""
        self.memory.put(doc_id, kept)
        if self.store is not None and doc_id not in self._stored:
            self.store.save(doc_id, kept)
            self._stored.add(doc_id)

    def forget(self, doc_id: str) -> None:
        """Drop the document from memory (with a store, its last keys are written to disk first)."""
        kept = self.memory.get(doc_id)
        if kept is not None and self.store is not None:
            self.store.save(doc_id, kept)
        self.memory.forget(doc_id)

    def renew(self, store: DocStore | None) -> None:
        """Other kernels serve from now on: what memory holds was computed with the old ones, and kept
        documents are looked for in `store`."""
        self.memory.clear()
        self.store, self._stored = store, set()
