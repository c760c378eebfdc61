"""How the next-edit endpoints read their bodies (`remote.server.edit_api`), without a model: the file, the
window and the history of a Mercury Edit message as Continue lays it out, of Tabby's `edit_history`, and
bad input named in one sentence."""

from __future__ import annotations

import msgspec
import pytest

from remote.server import schemas
from remote.server.edit_api import mercury_document, tabby_document
from remote.server.service import RequestError
from tests.support.next_edit_requests import (
    DIFF,
    EDITED,
    LINE,
    continue_body,
    mercury_content,
    rename_window,
    tabby_body,
)
from tests.support.next_edit_sample import NEW, OLD, VIEWS


def mercury(content: str) -> schemas.EditCompletions:
    return msgspec.convert(continue_body(content), schemas.EditCompletions)


def test_a_continue_message_gives_the_file_its_window_and_the_edit() -> None:
    content, first, last = rename_window()
    doc = mercury(content)
    parsed = mercury_document(doc)
    assert parsed.path == "views.py" and parsed.text == EDITED and parsed.spec.id == "python"
    lines = EDITED.split("\n")
    assert parsed.text[parsed.start : parsed.end] == "\n".join(lines[first : last + 1])
    (edit,) = parsed.history
    assert edit.line == LINE and edit.removed == {OLD} and EDITED[edit.start : edit.end] == edit.new_lines
    assert parsed.extra == ()

    viewed = mercury_content(EDITED, LINE, 0, LINE, LINE + 2, [DIFF], [("util.py", "def render(x):\n    return x")])
    (chunk,) = mercury_document(mercury(viewed)).extra
    assert chunk.path == "util.py" and "def render" in chunk.text
    older = viewed.replace("<|recently_viewed_code_snippet|>\n", "").replace("\n<|/recently_viewed_code_snippet|>", "")
    assert [c.path for c in mercury_document(mercury(older)).extra] == ["util.py"]  # Continue's older layout


def test_the_window_at_the_file_s_ends_and_a_cursor_before_it() -> None:
    text = "a = 1\nb = 2\nc = 3"
    content = mercury_content(text, 0, 1, 1, 2, [])
    parsed = mercury_document(mercury(content))
    assert parsed.text == text and parsed.text[parsed.start : parsed.end] == "b = 2\nc = 3" and parsed.history == []
    parsed = mercury_document(mercury(mercury_content(text, 0, 5, 0, 0, [])))
    assert parsed.text[parsed.start : parsed.end] == "a = 1"


@pytest.mark.parametrize(("content", "named"), [
    ("hello", "<|current_file_content|> section"),
    ("<|current_file_content|>\nx = 1\n<|/current_file_content|>", "<|code_to_edit|>"),
    ("<|current_file_content|>\nx = 1\n", "no closing <|/current_file_content|>"),
    ("<|current_file_content|>\n<|code_to_edit|>\nx<|cursor|> = <|cursor|>1\n<|/code_to_edit|>\n<|/current_file_content|>",
     "2 <|cursor|> markers"),
    (mercury_content(EDITED, LINE, 0, LINE, LINE, ["--- views.py\n+++ views.py\nnot a hunk"]), "no hunk"),
    (mercury_content(VIEWS, LINE, 0, LINE, LINE, [DIFF]), "newest diff of views.py does not match"),
])
def test_bad_messages_are_named(content: str, named: str) -> None:
    with pytest.raises(RequestError, match=named.replace("|", r"\|")) as caught:
        mercury_document(mercury(content))
    assert caught.value.status == 400 and "\n" not in caught.value.message


def test_tabby_s_edit_history_gives_the_whole_file_and_the_edit() -> None:
    body = msgspec.convert(tabby_body(VIEWS, DIFF, EDITED), schemas.TabbyCompletion)
    parsed = tabby_document(body)
    assert (parsed.start, parsed.end, parsed.text) == (0, len(EDITED), EDITED)
    assert [e.line for e in parsed.history] == [LINE]
    from_diff = tabby_document(msgspec.convert(tabby_body(EDITED, DIFF, EDITED), schemas.TabbyCompletion))
    assert [(e.line, e.removed) for e in from_diff.history] == [(LINE, {OLD})]
    for bad, named in ((tabby_body(VIEWS, "garbage", EDITED), "edits_diff: no hunk"),
                       ({**tabby_body(VIEWS, DIFF, EDITED), "segments": {"prefix": ""}}, "segments.edit_history")):
        with pytest.raises(RequestError, match=named):
            tabby_document(msgspec.convert(bad, schemas.TabbyCompletion))
    assert NEW in EDITED
