"""Next edits over HTTP, in the two shapes clients send (research/next-edit.md, 1.4), both answered by
`infill.next_edit.rewrite` on the shared batcher:

- Inception's `POST /v1/edit/completions` (Mercury Edit; Continue's Next Edit with an `inception` model
  whose name holds `mercury-coder`). The last user message holds tagged sections, as Inception's docs and
  Continue's template write them:

      <|recently_viewed_code_snippets|>            (optional) code from other files: each
      <|recently_viewed_code_snippet|>             snippet `code_snippet_file_path: PATH` then its code
      ...
      <|current_file_content|>                     the file: `current_file_path: PATH` first, then its text
      ...<|code_to_edit|> the window, on lines of its own, with <|cursor|> where the cursor is <|/code_to_edit|>
      <|edit_diff_history|>                        (optional) unified diffs of the user's edits, oldest first
      ...

  The answer is the window rewritten, in a fence (Continue keeps what lies between "```\\n" and "\\n```"):
  `{id, object: "edit.completion", created, model, choices: [{index, message: {role, content}, finish_reason}],
  usage}`; with `stream: true` (Continue asks for it) one server-sent event and `[DONE]`.
- Tabby's `POST /v1/completions` with `mode: "next_edit_suggestion"` and `segments.edit_history`
  (`original_code`, `edits_diff`, `current_version`): `choices[0].text` is the next version of
  `current_version`, as Tabby's server answers (its model writes `<|next_version|>`).

The window (or file) comes back unchanged when there is no next edit. Bad input is a 400 naming the section
or field; a model that cannot rewrite in place (a block-diffusion checkpoint) a 501. A huge body (a
100,000-line file, a megabyte string in any field) costs about its length: the sections are found in one
pass, the versions are compared between their common head and tail (`diff_history`), the file is read
around the edit only (`infill.next_edit.crop`), and usage counts of texts past the model's reach are
estimated (`_tokens`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine import Stats
from infill.context import Chunk
from infill.languages import LanguageSpec, UnsupportedLanguage, language_for_file
from infill.next_edit.diff_history import diff_history, file_diffs, line_edits
from infill.next_edit.edits import DocEdit
from infill.next_edit.patches import PatchError
from infill.next_edit.rewrite import rewrite
from infill.next_edit.suggest import NOT_IN_PLACE, NextEditSettings, OpenDocument, in_place
from infill.tickets import Ticket
from infill.windows import count_tokens
from remote.server import compat_apis, schemas, tabby_api
from remote.server.bounds import char_budget
from remote.server.extra_context import client_chunks, extra_header
from remote.server.service import RequestError, TextOutcome, language, sampling

OPEN, CLOSE = "<|{}|>", "<|/{}|>"
CURSOR = "<|cursor|>"
NEXT_EDIT_TOKEN = "<|!@#IS_NEXT_EDIT!@#|>"  # Continue marks its next-edit prompts with it (and strips it)
FILE_PATH, SNIPPET_PATH = "current_file_path: ", "code_snippet_file_path: "


@dataclass(frozen=True)
class Document:
    """What one next-edit request asks about: the file, its path, the window to rewrite, the edit history."""

    path: str
    text: str
    start: int
    end: int
    history: list[DocEdit]
    spec: LanguageSpec
    extra: tuple[Chunk, ...] = ()


def _section(content: str, name: str) -> str | None:
    """The text between `<|name|>` and `<|/name|>` (one line break trimmed at either end), None without them."""
    opened = content.find(OPEN.format(name))
    if opened < 0:
        return None
    start = opened + len(OPEN.format(name))
    stop = content.find(CLOSE.format(name), start)
    if stop < 0:
        raise RequestError(f"messages: {OPEN.format(name)} has no closing {CLOSE.format(name)}")
    body = content[start:stop]
    return body.removeprefix("\n").removesuffix("\n")


def _user_content(messages: Sequence[schemas.EditMessage]) -> str:
    users = [m for m in messages if m.role == "user"]
    if not users:
        raise RequestError("messages: give one user message holding the <|current_file_content|> section")
    content = users[-1].content
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) for part in content if part.get("type", "text") == "text")
    return (content or "").replace(NEXT_EDIT_TOKEN, "")


def _snippets(section: str | None) -> list[tuple[str, str]]:
    """(path, code) of the recently viewed snippets, oldest first (tagged one by one, or, as older Continue
    versions wrote them, each after its path line)."""
    if not section or not section.strip():
        return []
    opened, closed = OPEN.format("recently_viewed_code_snippet"), CLOSE.format("recently_viewed_code_snippet")
    tagged = [part[: part.find(closed)].removeprefix("\n").removesuffix("\n")
              for part in section.split(opened)[1:] if closed in part]  # one pass: no search from every tag
    blocks = tagged or re.split(r"\n(?=" + re.escape(SNIPPET_PATH) + ")", section)
    out = []
    for block in blocks:
        head, _, code = block.partition("\n")
        path = head.removeprefix(SNIPPET_PATH).strip() if head.startswith(SNIPPET_PATH) else ""
        out.append((path, code if path else block))
    return out


def _spec(name: str | None, path: str) -> LanguageSpec:
    """The language a request names, else the one its file's extension says (plain text for none)."""
    if name:
        return language(name.lower())
    try:
        return language_for_file(path)
    except UnsupportedLanguage as exc:
        raise RequestError(f"language: {exc}") from None


def mercury_document(body: schemas.EditCompletions) -> Document:
    """The file, window and history an `/v1/edit/completions` body holds; RequestError names what is missing."""
    content = _user_content(body.messages)
    current = _section(content, "current_file_content")
    if current is None:
        raise RequestError("messages: the user message has no <|current_file_content|> section")
    path = ""
    if current.startswith(FILE_PATH):
        head, _, current = current.partition("\n")
        path = head.removeprefix(FILE_PATH).strip()
    opened, closed = current.find(OPEN.format("code_to_edit")), current.find(CLOSE.format("code_to_edit"))
    if opened < 0 or closed < opened:
        raise RequestError("messages: <|current_file_content|> holds no <|code_to_edit|>…<|/code_to_edit|> window")
    window = _section(current, "code_to_edit") or ""
    text = current[:opened] + window + current[closed + len(CLOSE.format("code_to_edit")):]
    start, end = opened, opened + len(window)
    if text.count(CURSOR) > 1:
        raise RequestError(f"messages: <|current_file_content|> holds {text.count(CURSOR)} {CURSOR} markers")
    cursor = text.find(CURSOR)
    if cursor >= 0:
        text = text.replace(CURSOR, "")
        start -= len(CURSOR) if cursor < start else 0
        end -= len(CURSOR) if cursor < end else 0
    diffs = _section(content, "edit_diff_history") or ""
    uri = path or "untitled"
    try:
        history = diff_history(uri, path, text, diffs, cursor if cursor >= 0 else None) if diffs.strip() else []
    except PatchError as exc:
        raise RequestError(f"<|edit_diff_history|>: {exc}") from None
    snippets = _snippets(_section(content, "recently_viewed_code_snippets"))
    return Document(uri, text, start, end, history, _spec(body.language, path), tuple(client_chunks(snippets)))


def tabby_document(body: schemas.TabbyCompletion) -> Document:
    seg = body.segments
    if seg is None or seg.edit_history is None:
        raise RequestError("segments.edit_history: mode 'next_edit_suggestion' needs "
                           "{original_code, edits_diff, current_version}")
    given, path = seg.edit_history, seg.filepath or ""
    current = given.current_version
    cursor = len(seg.prefix) if current.startswith(seg.prefix) else None
    uri = path or "untitled"
    try:
        if given.edits_diff.strip():
            file_diffs(given.edits_diff)
        if given.original_code != current:
            history = line_edits(uri, given.original_code, current, cursor)
        else:
            history = diff_history(uri, path, current, given.edits_diff, cursor) if given.edits_diff.strip() else []
    except PatchError as exc:
        raise RequestError(f"segments.edit_history.edits_diff: {exc}") from None
    return Document(uri, current, 0, len(current), history, _spec(body.language, path), tabby_api.other_files(seg))


def next_version(engine: Any, doc: Document, temperature: float | None, top_p: float | None, seed: int | None,
                 aggressiveness: str | None, ticket: Ticket) -> str:
    """The document's window with the next edits there applied (as it was when there are none)."""
    try:
        settings = NextEditSettings(aggressiveness or "medium")
    except ValueError as exc:
        raise RequestError(str(exc)) from None
    params = sampling(temperature, top_p, seed)
    if not in_place(engine):
        raise RequestError(f"next edits: this engine's model {NOT_IN_PLACE} (a block-diffusion checkpoint); serve "
                           "one that fills gaps in place (the bundled default, Dream, LLaDA)", 501, "not_implemented")
    context = extra_header(doc.extra, doc.spec.comment_prefix, engine.tokenizer, engine.max_length)
    document = OpenDocument(doc.path, doc.text, doc.spec)
    return rewrite(engine, document, doc.history, doc.start, doc.end, params, settings, ticket, context).text


# -- answers ------------------------------------------------------------------------------------------


def _outcome(engine: Any, prompt: str, text: str) -> TextOutcome:
    """The answer as the text endpoints' outcome (their bodies and events serve it); token counts by the
    model's tokenizer: the user message's, and the answer's."""
    written = _tokens(engine, text)
    return TextOutcome([text], ["stop"], _tokens(engine, prompt), Stats(new_tokens=written))


def _tokens(engine: Any, text: str) -> int:
    """`text`'s tokens; for a text longer than the model's reach (`char_budget`), an estimate from its first
    that many characters: tokenizing megabytes for a usage figure would cost seconds and most of a gigabyte."""
    budget = char_budget(engine)
    if len(text) <= budget:
        return count_tokens(text, engine.tokenizer)
    return round(count_tokens(text[:budget], engine.tokenizer) * len(text) / budget)


def mercury_outcome(engine: Any, body: schemas.EditCompletions, ticket: Ticket) -> TextOutcome:
    doc = mercury_document(body)
    window = next_version(engine, doc, body.temperature, body.top_p, None, body.aggressiveness, ticket)
    return _outcome(engine, _user_content(body.messages), f"```\n{window}\n```")


def mercury_body(outcome: TextOutcome, model: str) -> dict[str, Any]:
    """Inception's `EditCompletionResponse`: the chat-shaped answer, `object` "edit.completion"."""
    answer = compat_apis.fim_body(outcome, model)
    return {**answer, "object": "edit.completion",
            "usage": {**answer["usage"], "reasoning_tokens": 0, "cached_input_tokens": 0}}


def tabby_outcome(engine: Any, body: schemas.TabbyCompletion, ticket: Ticket) -> TextOutcome:
    if body.seed is not None and body.seed < 0:
        raise RequestError(f"seed {body.seed}: must be at least 0")
    doc = tabby_document(body)
    text = next_version(engine, doc, body.temperature, None, body.seed, body.aggressiveness, ticket)
    return _outcome(engine, doc.text, text)
