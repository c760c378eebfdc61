"""Code from other files sent to `dcomplete engine` (a real subprocess, a tiny anchored checkpoint) goes through
the repository context's formatting: the native document form with `extra` writes what an in-process fill
with that header writes, and `extra` on the OpenAI-style endpoints and `input_extra` on llama.cpp's `/infill`
reach the canvas (its prompt tokens grow by the header's)."""

from __future__ import annotations

import httpx
import pytest

from engine import DenoiseParams, Engine
from infill import Spot, fill
from infill.canvas import encode
from infill.fill import FillOptions
from remote.server.extra_context import client_chunks, extra_header

EXTRA = [{"filename": "util.py", "text": "def helper(left, right):\n    return left + right\n"}]
DOC = "x = helper(1, 2)  # three\n"


def header(engine: Engine) -> str:
    return extra_header(client_chunks([(c["filename"], c["text"]) for c in EXTRA]), "#", engine.tokenizer,
                        engine.max_length)


def test_the_native_document_form_puts_extra_above_the_text_as_a_local_fill_would(server, local):
    spot = Spot(len(DOC) - 1, len(DOC) - 1, 6, "line")
    body = {"text": DOC, "spots": [{"start": spot.start, "end": spot.end, "n_masks": 6, "kind": "line"}]}
    reply = httpx.post(server.url + "/v1/infill", json={**body, "extra": EXTRA}, timeout=120).json()
    context = header(local)
    assert context.startswith("# util.py\ndef helper(left, right):")
    expected = fill(local, DOC, [spot], DenoiseParams.fast(), options=FillOptions(context=context))
    assert expected.edits and expected.edits[0].token_ids
    assert [(e["start"], e["token_ids"]) for e in reply["edits"]] == [(e.start, list(e.token_ids))
                                                                      for e in expected.edits]
    bad = httpx.post(server.url + "/v1/infill", json={**body, "extra": [{"filename": "a.py"}]})
    assert bad.status_code == 400 and "text" in bad.json()["error"]["message"]


@pytest.mark.parametrize(("path", "field", "body"), [
    ("/v1/completions", "extra", {"prompt": "x = 1  # the value is", "suffix": "\n", "max_tokens": 2}),
    ("/v1/fim/completions", "extra", {"prompt": "x = 1  # the value is", "suffix": "\n", "max_tokens": 2}),
    ("/infill", "input_extra", {"input_prefix": "x = 1  # the value is", "input_suffix": "\n", "n_predict": 2}),
])
def test_extra_reaches_the_canvas_of_every_text_endpoint(server, local, path, field, body):
    def prompt_tokens(sent: dict) -> int:
        answer = httpx.post(server.url + path, json=sent, timeout=120).json()
        return int(answer["usage"]["prompt_tokens"] if "usage" in answer else answer["tokens_evaluated"])

    grown = prompt_tokens({**body, field: EXTRA}) - prompt_tokens(body)
    assert grown == len(encode(local.tokenizer, header(local)))
