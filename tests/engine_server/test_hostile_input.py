"""Hostile input to a real `dcomplete engine` (tiny random anchored checkpoint): deep nesting, absurd numbers
and unwritable leads are 400s that name the field; a 100,000-line prompt or document is answered as its
part near the cursor is, token for token (the cut before parsing and tokenizing, `remote.server.bounds`).
The seeded fuzz run over every endpoint is tests/fuzz/test_http_fuzz.py."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from tests.support.next_edit_requests import DIFF, EDITED, continue_body, rename_window, tabby_body
from tests.support.next_edit_sample import VIEWS

FILLER = "x = 1\n"
HEAD = "def total(items):\n    result = 0\n    for item in items:\n        result += "
TAIL = "\n    return result\n\n\nprint(total([1, 2, 3]))\n"
FAR, NEAR = 100_000, 3_200  # lines of filler; both multiples of the window planner's 32-line grid


def post(server, path: str, body: object | bytes) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8", "surrogatepass")
    return httpx.post(server.url + path, content=content, headers={"Content-Type": "application/json"},
                      timeout=120)


def refused(reply: httpx.Response, says: str) -> None:
    error = reply.json()["error"]
    assert reply.status_code == error["code"] == 400 and says in error["message"], reply.text


NESTED = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("path, body, says", [
    ("/v1/completions", NESTED, "Expected `object`, got `array`"),  # a typed decoder stops at the first level
    ("/v1/completions", b'{"prompt": "x", "unknown": ' + NESTED + b"}", "too deeply"),
    ("/v1/completions", b'{"segments": {"prefix": "x"}, "stop": ' + NESTED + b"}", "too deeply"),
    ("/v1/infill", b'{"canvases": ' + NESTED + b"}", "too deeply"),
    ("/v1/infill", b'{"text": "x", "holes": true, "extra": [' + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"]}",
     "too deeply"),
    ("/infill", b'{"input_prefix": "x", "input_extra": [' + NESTED + b"]}", "$.input_extra[0]"),
    ("/v1/fim/completions", b'{"prompt": "x", "x": ' + b"[" * 3_000, "too deeply"),
    ("/v1/events", b'{"type": "view", "x": ' + NESTED + b"}", "too deeply"),
])
def test_deep_nesting_is_a_400(server, path, body, says):
    refused(post(server, path, body), says)
    assert httpx.get(server.url + "/health").json()["status"] == "ok"


@pytest.mark.parametrize("path, body, says", [
    ("/v1/completions", {"prompt": HEAD, "n": 10**9}, "rows"),
    ("/infill", {"input_prefix": HEAD, "n_cmpl": 10**9}, "rows"),
    ("/v1/completions", {"prompt": HEAD, "temperature": 5e-324}, "temperature"),
    ("/v1/fim/completions", {"prompt": HEAD, "temperature": 1e308}, "temperature"),
    ("/v1/infill", {"text": "def f():\n    # <|hole:1000000000|>\n", "holes": True}, "masks"),
    ("/v1/infill", {"text": "x = 1\n", "spots": [{"start": 0, "end": 0, "n_masks": 10**9, "kind": "line"}]},
     "masks"),
    ("/v1/infill", {"text": "x = 1\n", "holes": True, "params": {"steps": 10**18}}, "params.steps"),
    ("/v1/infill", {"text": "x = 1\n", "holes": True, "params": {"block": 2**64 - 1}}, "params.block"),
    ("/v1/infill", {"text": "x = 1\n", "holes": True, "params": {"seed": 2**64}}, "seed"),
    ("/v1/completions", {"prompt": HEAD, "seed": -(2**63) - 1, "temperature": 0.5}, "seed"),
    ("/v1/completions", tabby_body(VIEWS, DIFF, EDITED, seed=2**64), "seed"),  # a next edit: was a 500
    ("/v1/edit/completions", continue_body(rename_window()[0], temperature=5e-324), "temperature"),
    ("/v1/infill", {"text": "x = 1\n" * 300_000, "ranges": [[1, 300_000]]}, "ranges"),
    ("/v1/infill", {"text": "x = 1\n" * 300_000, "ranges": [[1, 1], [300_000, 300_000]]}, "does not fit"),
    ("/v1/infill", {"text": "x = 1\n" * 300_000, "spots": [{"start": 0, "end": 0, "n_masks": 2, "kind": "line"},
                                                           {"start": 1_799_994, "end": 1_799_994, "n_masks": 2,
                                                            "kind": "line"}]}, "does not fit"),
])
def test_absurd_values_are_400s_naming_them(server, path, body, says):
    refused(post(server, path, body), says)


def test_a_ready_canvas_with_an_unwritable_lead_or_bad_ids_is_a_400(server, local):
    sp = local.special
    ids = [sp.bos_id, *local.tokenizer.encode("def f(x):\n    return"), *[sp.mask_id] * 4]
    text = "def f(x):\n    return\n"
    slot = {"start": len(ids) - 4, "end": len(ids), "lead": "", "tail": 0,
            "spot": {"start": len(text) - 1, "end": len(text) - 1, "n_masks": 4, "kind": "line"}}
    sampled = {"temperature": 0.8}
    refused(post(server, "/v1/infill", {"canvases": [{"ids": ids, "span_leads": ["\U0010fffd" * 3]}],
                                        "params": sampled}), "span_leads[0]")
    refused(post(server, "/v1/infill", {"canvases": [{"ids": ids, "span_ends": [
        {"text": text, "language": "python", "slot": slot, "before": [-5]}]}]}), "before")
    assert post(server, "/v1/infill", {"canvases": [{"ids": ids, "span_leads": [" "]}], "params": sampled}
                ).status_code == 200


def test_a_100k_line_prompt_is_answered_as_its_last_lines_are(server):
    answers = []
    for lines in (FAR, NEAR):
        body = {"prompt": FILLER * lines + HEAD, "suffix": TAIL + FILLER * lines, "max_tokens": 8}
        reply = post(server, "/v1/completions", body)
        assert reply.status_code == 200, reply.text
        answers.append((reply.json()["choices"][0]["text"], reply.json()["usage"]["prompt_tokens"]))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("form", ["spots", "holes", "ranges"])
def test_a_100k_line_document_is_filled_as_its_end_is_in_the_whole_documents_terms(server, form):
    results = []
    for lines in (FAR, NEAR):
        text = FILLER * lines + HEAD + TAIL
        cursor = len(FILLER * lines + HEAD)
        if form == "spots":
            body: dict = {"text": text, "spots": [{"start": cursor, "end": cursor, "n_masks": 6, "kind": "line"}]}
        elif form == "holes":
            body = {"text": FILLER * lines + "def f(x):\n    # <|hole:6|>\n    return x\n", "holes": True}
        else:
            body = {"text": text, "ranges": [[lines + 4, lines + 4]]}
        reply = post(server, "/v1/infill", body)
        assert reply.status_code == 200, reply.text
        answer = reply.json()
        shift = len(FILLER) * lines
        edits = [(e["start"] - shift, e["end"] - shift, e["new_text"]) for e in answer["edits"]]
        notes = [shifted(note, lines) for note in answer["notes"]]
        results.append((edits, notes, answer["stats"]["positions"]))
    assert results[0] == results[1]
    assert results[0][0] or results[0][1]  # something was written, or a note says why not


def shifted(note: str, lines: int) -> str:
    return re.sub(r"^line (\d+):", lambda m: f"line {int(m.group(1)) - lines}:", note)


def test_a_line_capped_at_max_tokens_that_is_all_lead_completes(server):
    # the retry of such a line would keep every position of its span: it is not made (was a 400)
    body = {"prompt": "import os\n\n\n", "suffix": TAIL, "max_tokens": 3, "temperature": 0}
    assert post(server, "/v1/completions", body).status_code == 200
