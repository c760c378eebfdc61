"""Next edits from `dcomplete engine` as a subprocess, in the shapes their clients send: Mercury Edit's
`/v1/edit/completions` as Continue lays it out and reads the answer (streamed, the text between the fences),
and Tabby's `mode: "next_edit_suggestion"`. With the bundled model (aggressiveness "high", as the other
next-edit end-to-end tests), the sample's rename is carried into the window; a window with nothing to change
comes back as it was; bad input is a 400 naming it; a block-diffusion model a 501."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.engine_server import doc_configs
from tests.support.engine_process import EngineProcess
from tests.support.next_edit_requests import (
    DIFF,
    EDITED,
    LINE,
    continue_body,
    continue_text,
    mercury_content,
    rename_window,
    tabby_body,
)
from tests.support.next_edit_sample import NEW, OLD, VIEWS

TIMEOUT = 300
DOCS = Path(__file__).parents[2] / "docs" / "engine-server.md"


@pytest.fixture(scope="module")
def bundled() -> Iterator[EngineProcess]:
    with EngineProcess(["--model", "default"], timeout=300) as process:
        yield process


def post(engine: EngineProcess, path: str, body: object) -> httpx.Response:
    return httpx.post(engine.url + path, json=body, timeout=TIMEOUT)


@pytest.mark.slow
def test_continue_s_request_gets_the_rename_carried_into_its_window(bundled: EngineProcess) -> None:
    content, first, last = rename_window()
    streamed = post(bundled, "/v1/edit/completions", continue_body(content, aggressiveness="high"))
    assert streamed.status_code == 200 and streamed.headers["content-type"].startswith("text/event-stream")
    assert streamed.text.rstrip().endswith("data: [DONE]")
    window = continue_text(streamed.text)
    before = EDITED.split("\n")[first : last + 1]
    after = window.split("\n")
    assert len(after) == len(before) and after != before
    for old, new in zip(before, after):  # only lines that held the old name change, and only to the new one
        assert old == new or (OLD in old and new == old.replace(OLD, NEW))
    lines = EDITED.split("\n")
    ast.parse("\n".join(lines[:first] + after + lines[last + 1 :]))

    plain = post(bundled, "/v1/edit/completions", continue_body(content, aggressiveness="high", stream=False))
    answer = plain.json()
    assert plain.status_code == 200 and answer["object"] == "edit.completion"
    (choice,) = answer["choices"]
    assert choice["message"] == {"role": "assistant", "content": f"```\n{window}\n```"}
    assert choice["finish_reason"] == "stop" and answer["usage"]["completion_tokens"] > 0
    assert set(answer["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens", "reasoning_tokens",
                                    "cached_input_tokens"}


@pytest.mark.slow
def test_tabby_s_next_version_carries_the_rename(bundled: EngineProcess) -> None:
    answer = post(bundled, "/v1/completions", tabby_body(VIEWS, DIFF, EDITED, aggressiveness="high"))
    assert answer.status_code == 200
    (choice,) = answer.json()["choices"]
    text = choice["text"]
    assert text.count(OLD) < EDITED.count(OLD)
    for old, new in zip(EDITED.split("\n"), text.split("\n"), strict=True):
        assert old == new or (OLD in old and new == old.replace(OLD, NEW))
    ast.parse(text)


@pytest.mark.slow
def test_nothing_to_change_comes_back_as_it_was(bundled: EngineProcess) -> None:
    column = EDITED.split("\n")[LINE].index(NEW)
    content = mercury_content(EDITED, LINE, column, 3, 6, [DIFF])  # lines above the edit: no old name there
    window = continue_text(post(bundled, "/v1/edit/completions", continue_body(content)).text)
    assert window == "\n".join(EDITED.split("\n")[3:7])

    # a number nothing else holds: at "medium" the model offers to put it in the next return too; "low"
    # keeps what it is not sure of
    changed = VIEWS.replace("status=404", "status=410")
    diff = "@@ -8,1 +8,1 @@\n-" + VIEWS.split("\n")[7] + "\n+" + changed.split("\n")[7] + "\n"
    answer = post(bundled, "/v1/completions", tabby_body(VIEWS, diff, changed, aggressiveness="low"))
    assert answer.status_code == 200 and answer.json()["choices"][0]["text"] == changed


def test_bad_input_is_a_400_naming_it(server: EngineProcess) -> None:
    content, _, _ = rename_window()
    cases = [
        ("/v1/edit/completions", continue_body("def f():\n    pass\n"), "<|current_file_content|>"),
        ("/v1/edit/completions", continue_body(content.replace("<|/code_to_edit|>", "")), "<|code_to_edit|>"),
        ("/v1/edit/completions", continue_body(content.replace("@@ -8,1 +8,1 @@", "@@ -2,1 +2,1 @@")),
         "does not match"),
        ("/v1/edit/completions", continue_body(content.replace("@@ -8,1 +8,1 @@", "@@ eight @@")), "hunk"),
        ("/v1/edit/completions", continue_body(content, aggressiveness="wild"), "aggressiveness"),
        ("/v1/edit/completions", {"messages": "hello"}, "messages"),
        ("/v1/completions", tabby_body(VIEWS, "garbage", EDITED), "edits_diff"),
        ("/v1/completions", {**tabby_body(VIEWS, DIFF, EDITED), "segments": {"prefix": "x"}}, "edit_history"),
        ("/v1/completions", {**tabby_body(VIEWS, DIFF, EDITED), "mode": "rewrite"}, "mode 'rewrite'"),
    ]
    for path, body, named in cases:
        answer = post(server, path, body)
        message = answer.json()["error"]["message"]
        assert answer.status_code == 400 and named in message and "\n" not in message, (named, message)
    assert httpx.get(server.url + "/health").status_code == 200

    continue_model = yaml.safe_load(doc_configs.block("Next edits", 1, DOCS))["models"][0]
    assert continue_model["provider"] == "inception" and "mercury-coder" in continue_model["model"]
    where = doc_configs.at(continue_model["apiBase"], server.url) + "edit/completions"  # as Continue joins them
    no_history = mercury_content(EDITED, LINE, 0, LINE, LINE + 2, [])
    plain = httpx.post(where, json=continue_body(no_history, model=continue_model["model"], stream=False))
    window = "\n".join(EDITED.split("\n")[LINE : LINE + 3])
    assert plain.status_code == 200 and plain.json()["choices"][0]["message"]["content"] == f"```\n{window}\n```"


def test_a_block_diffusion_model_says_it_gives_no_next_edits(tiny_block) -> None:
    content, _, _ = rename_window()
    with EngineProcess(["--model", str(tiny_block("sdar"))]) as block:
        for path, body in (("/v1/edit/completions", continue_body(content)),
                           ("/v1/completions", tabby_body(VIEWS, DIFF, EDITED))):
            answer = post(block, path, body)
            error = answer.json()["error"]
            assert answer.status_code == 501 and error["type"] == "not_implemented"
            assert "block-diffusion" in error["message"] and "in place" in error["message"]
