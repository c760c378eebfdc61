"""The suggestion memory's pure parts: typing through a shown suggestion, and the cache of places."""

from __future__ import annotations

from pathlib import Path

from infill.feedback import FeedbackLog
from lsp_server.completion import CompletionQuery, Suggestion
from lsp_server.suggestions import (
    PREFIX_CHARS,
    Placed,
    SuggestionCache,
    SuggestionMemory,
    context_key,
    continued,
    inserted_text,
    typed_through,
)

URI = "file:///a.py"
SETTINGS = ("local", "default", 0.9)
TEXT = "def area(w, h):\n    return \n"
CURSOR = TEXT.index("return ") + len("return ")


def at(text: str, cursor: int) -> CompletionQuery:
    return CompletionQuery(text, text, cursor)


def typed(text: str, cursor: int, chars: str) -> tuple[str, int]:
    return text[:cursor] + chars + text[cursor:], cursor + len(chars)


def shown_memory(*suggestions: str, alternatives: bool = False) -> SuggestionMemory:
    memory = SuggestionMemory(capacity=8)
    placed = Placed(
        TEXT,
        CURSOR,
        tuple(Suggestion(CURSOR, CURSOR, s) for s in suggestions),
        tuple(f"id{i}" for i in range(len(suggestions))),
        SETTINGS,
        alternatives,
    )
    memory.shown(URI, placed)
    return memory


def test_inserted_text_is_only_an_insertion_that_ends_at_the_new_cursor() -> None:
    assert inserted_text("ab|cd", 3, "ab|XYcd", 5) == "XY"
    assert inserted_text("abcd", 2, "abcd", 2) == ""
    assert inserted_text("abcd", 2, "abXcd", 2) is None  # the cursor did not move past it
    assert inserted_text("abcd", 2, "aXbcd", 2) is None  # inserted elsewhere
    assert inserted_text("abcd", 2, "abd", 2) is None  # a deletion
    assert inserted_text("abcd", 2, "abXd", 3) is None  # a replacement of the same length plus one


def test_typing_through_keeps_the_rest_and_the_id_across_keystrokes() -> None:
    memory = shown_memory("w * h")
    text, cursor = TEXT, CURSOR
    for char, rest in (("w", " * h"), (" ", "* h"), ("*", " h")):
        text, cursor = typed(text, cursor, char)
        recalled = memory.recall(URI, at(text, cursor), "python", SETTINGS, alternatives=False)
        assert recalled is not None and recalled.source == "typed"
        assert recalled.item_ids == ("id0",)
        assert recalled.suggestions == (Suggestion(cursor, cursor, rest),)


def test_a_keystroke_that_does_not_continue_it_drops_the_suggestion() -> None:
    memory = shown_memory("w * h")
    text, cursor = typed(TEXT, CURSOR, "x")
    assert memory.recall(URI, at(text, cursor), "python", SETTINGS, alternatives=False) is None
    # dropped for good: typing its next character from the original place does not bring it back
    assert memory.recall(URI, at(*typed(TEXT, CURSOR, "w")), "python", SETTINGS, alternatives=False) is None


def test_only_the_alternatives_the_user_types_through_are_kept() -> None:
    memory = shown_memory("w * h", "h * w", "width", alternatives=True)
    recalled = memory.recall(URI, at(*typed(TEXT, CURSOR, "w")), "python", SETTINGS, alternatives=True)
    assert recalled is not None
    assert [s.insert_text for s in recalled.suggestions] == [" * h", "idth"]
    assert recalled.item_ids == ("id0", "id2")


def test_other_settings_or_a_whole_suggestion_typed_leave_nothing_to_carry() -> None:
    placed = Placed(TEXT, CURSOR, (Suggestion(CURSOR, CURSOR, "w * h"),), ("id0",), SETTINGS, False)
    text, cursor = typed(TEXT, CURSOR, "w")
    assert typed_through(placed, text, cursor, ("local", "other", 0.9)) is None
    assert typed_through(placed, *typed(TEXT, CURSOR, "w * h"), SETTINGS) is None  # all of it typed
    assert typed_through(placed, *typed(TEXT, CURSOR, "w * "), SETTINGS) is not None


def test_a_suggestion_that_replaces_text_after_the_cursor_keeps_replacing_it() -> None:
    text = "print()\n"
    cursor = text.index(")")
    suggestion = Suggestion(cursor, cursor + 1, "name)")  # replaces the closing bracket
    after = continued(suggestion, text, cursor, "na")
    assert after == Suggestion(cursor + 2, cursor + 3, "me)")
    new_text = text[:cursor] + "na" + text[cursor:]
    assert new_text[: after.start] + after.insert_text + new_text[after.end :] == "print(name)\n"


def test_a_suggestion_that_rewrote_the_text_before_the_cursor_is_not_carried() -> None:
    text = "x = valeu\n"
    cursor = text.index("\n")
    healed = Suggestion(text.index("valeu"), cursor, "value + 1")  # rewrites what was typed
    assert continued(healed, text, cursor, " ") is None
    kept = Suggestion(text.index("valeu"), cursor, "valeu + 1")
    assert continued(kept, text, cursor, " ") == Suggestion(cursor + 1, cursor + 1, "+ 1")


def test_typing_through_then_a_mismatch_then_undo_finds_the_rest_in_the_cache() -> None:
    memory = shown_memory("w * h")
    text, cursor = typed(TEXT, CURSOR, "w")
    assert memory.recall(URI, at(text, cursor), "python", SETTINGS, alternatives=False) is not None
    wrong, after = typed(text, cursor, "x")
    assert memory.recall(URI, at(wrong, after), "python", SETTINGS, alternatives=False) is None
    back = memory.recall(URI, at(text, cursor), "python", SETTINGS, alternatives=False)
    assert back is not None and back.source == "cache"
    assert back.suggestions == (Suggestion(cursor, cursor, " * h"),)


def test_an_invoked_request_asks_for_alternatives_but_the_shown_suggestion_stays() -> None:
    memory = shown_memory("w * h")
    text, cursor = typed(TEXT, CURSOR, "w")
    assert memory.recall(URI, at(text, cursor), "python", SETTINGS, alternatives=True) is None
    again = memory.recall(URI, at(*typed(text, cursor, " ")), "python", SETTINGS, alternatives=False)
    assert again is not None and again.source == "typed" and again.item_ids == ("id0",)


def test_a_cache_hit_after_moving_away_and_back_is_a_new_offer() -> None:
    memory = SuggestionMemory(capacity=8)
    here, elsewhere = at(TEXT, CURSOR), at(TEXT, TEXT.index("(w"))
    memory.remember(here, "python", SETTINGS, False, (Suggestion(CURSOR, CURSOR, "w * h"),))
    memory.remember(elsewhere, "python", SETTINGS, False, ())
    assert memory.recall(URI, elsewhere, "python", SETTINGS, alternatives=False) is not None
    back = memory.recall(URI, here, "python", SETTINGS, alternatives=False)
    assert back is not None and back.source == "cache" and back.item_ids is None
    assert back.suggestions == (Suggestion(CURSOR, CURSOR, "w * h"),)
    assert memory.recall(URI, here, "python", ("local", "other", 0.9), alternatives=False) is None


def test_the_cache_is_keyed_by_the_text_around_the_cursor_not_its_offset() -> None:
    far_above = "x = 1\n" * (PREFIX_CHARS // 6 + 10)
    moved = far_above + TEXT
    assert context_key(moved, CURSOR + len(far_above), "python", SETTINGS) == context_key(
        "y = 2\n" + moved, CURSOR + len(far_above) + 6, "python", SETTINGS
    )
    assert context_key(TEXT, CURSOR, "python", SETTINGS) != context_key(TEXT + "#", CURSOR, "python", SETTINGS)
    assert context_key(TEXT, CURSOR, "python", SETTINGS) != context_key(TEXT, CURSOR - 1, "python", SETTINGS)


def test_the_cache_keeps_the_last_places_used() -> None:
    cache = SuggestionCache(capacity=2)
    one = (Suggestion(0, 0, "1"),)
    for key in ("a", "b"):
        cache.put(key, 0, one, alternatives=False)
    assert cache.get("a", 0, alternatives=False) == one  # "a" is now the most recent
    cache.put("c", 0, one, alternatives=False)
    assert len(cache) == 2
    assert cache.get("b", 0, alternatives=False) is None
    assert cache.get("a", 0, alternatives=False) == one and cache.get("c", 0, alternatives=False) == one
    cache.resize(0)
    cache.put("d", 0, one, alternatives=False)
    assert len(cache) == 0


def test_alternatives_serve_an_automatic_request_but_one_suggestion_does_not_serve_an_invoked_one() -> None:
    cache = SuggestionCache(capacity=4)
    three = tuple(Suggestion(5, 5, t) for t in ("a", "b", "c"))
    cache.put("k", 5, three, alternatives=True)
    assert cache.get("k", 5, alternatives=False) == three[:1]
    cache.put("k", 5, three[:1], alternatives=False)  # an automatic answer keeps the alternatives
    assert cache.get("k", 7, alternatives=True) == tuple(Suggestion(7, 7, t) for t in ("a", "b", "c"))
    cache.put("j", 5, three[:1], alternatives=False)
    assert cache.get("j", 5, alternatives=True) is None


def test_an_item_offered_again_is_not_rejected_and_is_accepted_once(tmp_path: Path) -> None:
    log = FeedbackLog(tmp_path / "feedback.jsonl")
    log.offered(URI, ["x"])
    log.offered(URI, ["x"])  # typed through
    log.offered(URI, ["x"])
    log.accept(URI, "x")
    assert (log.accepted, log.rejected) == (1, 0)
    log.offered(URI, ["y"])
    log.offered(URI, ["z"])
    assert log.rejected == 1
