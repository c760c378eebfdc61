"""Suggestions the server already knows: typed-through reuse and a small cache by context.

Two ways a completion request is answered without the model (`SuggestionMemory.recall`):

- **Typed through.** Since a document's suggestions were shown, the document changed only by text
  inserted at the cursor, and that text is the start of a suggestion: the answer is the rest of it, with
  the same item id (so the client's acceptance is one acceptance, and the feedback log does not count
  the shown item as rejected). Anything else the user types drops the shown suggestions.
- **The cache.** Every answer is remembered under a hash of the text around the cursor (`PREFIX_CHARS`
  before, `SUFFIX_CHARS` after), the language and the settings that change results, in a bounded LRU of
  places. Moving back to a place seen a moment ago, undoing an edit, or asking again at the same place
  answers from it (with new item ids: it is a new offer). An entry made for an invoked request holds its
  alternatives and serves both triggers; one made for an automatic request holds one suggestion and does
  not serve an invoked request, which asks for more.

Everything here is pure bookkeeping on strings (no LSP, no model) and runs on the event loop.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Literal

from .completion import CompletionQuery, Suggestion

PREFIX_CHARS = 2048
"""Characters before the cursor that make a cache key: far more than a line completion reads closely,
few enough to hash on every keystroke in microseconds."""
SUFFIX_CHARS = 512
"""Characters after the cursor that make a cache key."""


@dataclass(frozen=True)
class Placed:
    """Suggestions for one place: `text` with the cursor at `cursor`, computed under `settings`."""

    text: str
    cursor: int
    suggestions: tuple[Suggestion, ...]
    item_ids: tuple[str, ...]
    settings: Hashable
    alternatives: bool
    """Computed for an invoked trigger (several alternatives asked for)."""


@dataclass(frozen=True)
class Recalled:
    """An answer that needs no model: `item_ids` None means new ids (a cache hit is a new offer)."""

    suggestions: tuple[Suggestion, ...]
    item_ids: tuple[str, ...] | None
    source: Literal["typed", "cache"]


def inserted_text(before: str, cursor: int, after: str, new_cursor: int) -> str | None:
    """The text inserted at `cursor` that turned `before` into `after` with the cursor ending right
    after it; None when the change was anything else (a deletion, an edit elsewhere, a moved cursor)."""
    count = len(after) - len(before)
    if count < 0 or new_cursor != cursor + count:
        return None
    if not after.startswith(before[:cursor]) or not after.endswith(before[cursor:]):
        return None
    return after[cursor:new_cursor]


def continued(suggestion: Suggestion, text: str, cursor: int, typed: str) -> Suggestion | None:
    """`suggestion`, shown in `text` with the cursor at `cursor`, after `typed` was inserted there: the
    rest of it from the new cursor, replacing what it replaced after the old one; None when `typed` is
    not how it goes on, nothing but blanks would be left, or it rewrote the text before the cursor (then
    what is on screen is not a continuation)."""
    if not typed:
        return suggestion
    before = text[suggestion.start : cursor]
    if not suggestion.insert_text.startswith(before):
        return None
    ahead = suggestion.insert_text[len(before) :]
    if not ahead.startswith(typed) or not ahead[len(typed) :].strip():
        return None
    return Suggestion(cursor + len(typed), suggestion.end + len(typed), ahead[len(typed) :])


def typed_through(placed: Placed, text: str, cursor: int, settings: Hashable) -> Placed | None:
    """`placed` carried over to `text` at `cursor` when the user typed the start of some of its
    suggestions (those keep their ids, the others go); None when nothing of it is still being typed."""
    if settings != placed.settings:
        return None
    typed = inserted_text(placed.text, placed.cursor, text, cursor)
    if typed is None:
        return None
    kept = [
        (after, item_id)
        for suggestion, item_id in zip(placed.suggestions, placed.item_ids, strict=True)
        if (after := continued(suggestion, placed.text, placed.cursor, typed)) is not None
    ]
    if not kept:
        return None
    return replace(
        placed,
        text=text,
        cursor=cursor,
        suggestions=tuple(s for s, _ in kept),
        item_ids=tuple(i for _, i in kept),
    )


def context_key(text: str, cursor: int, language: str, settings: Hashable) -> str:
    """Hash of the text around the cursor, the language and the settings that change results."""
    digest = hashlib.blake2b(digest_size=16)
    prefix = text[max(0, cursor - PREFIX_CHARS) : cursor]
    suffix = text[cursor : cursor + SUFFIX_CHARS]
    digest.update(repr((language, settings, len(prefix), len(suffix))).encode("utf-8"))
    digest.update(prefix.encode("utf-8", "surrogatepass"))
    digest.update(suffix.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@dataclass(frozen=True)
class _Entry:
    relative: tuple[tuple[int, int, str], ...]
    """(start, end, insert_text) with start and end relative to the cursor."""
    alternatives: bool


class SuggestionCache:
    """The last `capacity` places' suggestions, least recently used dropped first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def resize(self, capacity: int) -> None:
        self.capacity = capacity
        self._trim()

    def get(self, key: str, cursor: int, alternatives: bool) -> tuple[Suggestion, ...] | None:
        """The suggestions remembered for `key`, placed at `cursor`; None when there are none, or when
        `alternatives` are wanted and the entry was made without them."""
        entry = self._entries.get(key)
        if entry is None or (alternatives and not entry.alternatives):
            return None
        self._entries.move_to_end(key)
        suggestions = tuple(Suggestion(cursor + s, cursor + e, t) for s, e, t in entry.relative)
        return suggestions if alternatives else suggestions[:1]

    def put(self, key: str, cursor: int, suggestions: tuple[Suggestion, ...], alternatives: bool) -> None:
        """Remember an answer (an empty one too: nothing to complete there costs nothing next time). An
        answer with a range wider than the hashed text around the cursor is not kept."""
        if self.capacity <= 0:
            return
        relative = tuple((s.start - cursor, s.end - cursor, s.insert_text) for s in suggestions)
        if any(start < -PREFIX_CHARS or end > SUFFIX_CHARS for start, end, _ in relative):
            return
        old = self._entries.get(key)
        if old is not None and old.alternatives and not alternatives:
            self._entries.move_to_end(key)  # an automatic answer does not replace the alternatives
            return
        self._entries[key] = _Entry(relative, alternatives)
        self._entries.move_to_end(key)
        self._trim()

    def _trim(self) -> None:
        while len(self._entries) > max(0, self.capacity):
            self._entries.popitem(last=False)


class SuggestionMemory:
    """Per document, the suggestions shown last; across documents, the cache of places."""

    def __init__(self, capacity: int) -> None:
        self.cache = SuggestionCache(capacity)
        self._shown: dict[str, Placed] = {}

    def recall(
        self, uri: str, query: CompletionQuery, language: str, settings: Hashable, alternatives: bool
    ) -> Recalled | None:
        """An answer without the model for `query`, or None when the model has to run. A shown
        suggestion the user did not type through is dropped here; one typed through is remembered at its
        new place too, so an undo finds it."""
        if query.selection is not None:  # items must extend the popup's selection: always computed
            return None
        shown = self._shown.pop(uri, None)
        carried = None if shown is None else typed_through(shown, query.text, query.offset, settings)
        key = context_key(query.text, query.offset, language, settings)
        if carried is not None:
            self._shown[uri] = carried
            self.cache.put(key, query.offset, carried.suggestions, carried.alternatives)  # for an undo
            if carried.alternatives or not alternatives:
                return Recalled(carried.suggestions, carried.item_ids, "typed")
        cached = self.cache.get(key, query.offset, alternatives)
        return None if cached is None else Recalled(cached, None, "cache")

    def remember(
        self,
        query: CompletionQuery,
        language: str,
        settings: Hashable,
        alternatives: bool,
        suggestions: tuple[Suggestion, ...],
    ) -> None:
        """Keep what was answered at `query`'s place for a later request there."""
        if query.selection is None:
            key = context_key(query.text, query.offset, language, settings)
            self.cache.put(key, query.offset, suggestions, alternatives)

    def shown(self, uri: str, placed: Placed | None) -> None:
        """What the client was answered for `uri` last (None: nothing that can be typed through)."""
        if placed is None or not placed.suggestions:
            self._shown.pop(uri, None)
        else:
            self._shown[uri] = placed

    def accepted(self, uri: str, item_id: str) -> None:
        """The client took the suggestion: it is no longer shown."""
        shown = self._shown.get(uri)
        if shown is not None and item_id in shown.item_ids:
            del self._shown[uri]

    def forget(self, uri: str) -> None:
        self._shown.pop(uri, None)
