"""llama.vim's, llama.vscode's and Continue's request sequences (`client_requests`, from their sources at the
cited commits) replayed against a real `dcomplete engine` on a tiny random anchored checkpoint: warm-ups
answer 200 and fill the slot's cache, which the next request reuses (`tokens_cached`, a smaller `prompt_n`);
llama.vim reads its flat `response_fields`; `t_max_predict_ms` never empties an answer; Continue's streams
carry what the engine writes for the prefix and suffix inside its FIM prompt."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
import yaml

from engine import DenoiseParams
from infill import fill, plan_completion
from tests.engine_server import client_requests as clients
from tests.engine_server import doc_configs
from tests.support.engine_process import EngineProcess

LINES = [
    "import os",
    "",
    "",
    "def load(path):",
    '    """Read a file."""',
    "    with open(path) as handle:",
    "        return handle.read()",
    "",
    "",
    "x = 1  # the value is",
    "",
    "",
    "def save(path, text):",
    "    with open(path, 'w') as handle:",
    "        handle.write(text)",
]
CURSOR = (9, len(LINES[9]))  # the end of `x = 1  # the value is`, where the tiny checkpoint writes text
CHUNK = clients.llama_vim_chunk(["def helper(a, b):", "    return a + b", "", "TOTAL = helper(1, 2)"], "util.py")


def llama_vim_endpoint(server: EngineProcess) -> str:
    config = doc_configs.block("llama.vim")
    return doc_configs.at(re.search(r"'endpoint_fim': '([^']+)'", config).group(1), server.url)


def llama_vscode_endpoint(server: EngineProcess) -> str:
    config = json.loads(doc_configs.block("llama.vscode"))
    return doc_configs.at(config["llama-vscode.endpoint"].rstrip("/"), server.url) + "/infill"


def infill(server: EngineProcess, body: dict, url: str | None = None) -> httpx.Response:
    reply = httpx.post(url or llama_vim_endpoint(server), json=body, timeout=120)
    assert reply.status_code == 200, reply.text
    return reply


def accepted_by_llama_vim(raw: str) -> dict:
    """What `s:fim_on_response` checks before it decodes an answer."""
    assert re.search(r"^\s*{", raw) and re.search(r'"content"\s*:"', raw), raw[:200]
    return json.loads(raw)


def test_llama_vim_warm_up_completion_speculation_and_next_keystroke(server):
    warm = infill(server, clients.llama_vim_warmup([CHUNK]))
    assert warm.json() == {}  # response_fields [""] names no field
    first = accepted_by_llama_vim(infill(server, clients.llama_vim_fim(LINES, *CURSOR, [CHUNK])).text)
    assert set(first) == set(clients.LLAMA_VIM_FIELDS)
    assert first["content"] and "\n" not in first["content"]
    assert first["timings/prompt_n"] > 0 and first["timings/prompt_ms"] > 0
    assert first["timings/predicted_n"] >= 1 and first["timings/predicted_ms"] > 0
    assert first["timings/prompt_per_second"] > 0 and first["timings/predicted_per_token_ms"] > 0
    assert first["tokens_cached"] > 0, "the warm-up put the ring chunk in slot 0's cache"
    cold = infill(server, {**clients.llama_vim_fim(LINES, *CURSOR, [CHUNK]), "cache_prompt": False}).json()
    assert cold["tokens_cached"] == 0 and cold["content"] == first["content"]
    assert cold["timings/prompt_n"] - first["timings/prompt_n"] == first["tokens_cached"]

    speculative = clients.llama_vim_fim(LINES, *CURSOR, [CHUNK], prev=first["content"].split("\n"))
    assert speculative["t_max_predict_ms"] == 1000 and speculative["prompt"].endswith(first["content"])
    accepted_by_llama_vim(infill(server, speculative).text)

    typed = list(LINES)
    typed[CURSOR[0]] += first["content"][0]
    keystroke = accepted_by_llama_vim(infill(server, clients.llama_vim_fim(typed, CURSOR[0], CURSOR[1] + 1,
                                                                           [CHUNK])).text)
    assert keystroke["tokens_cached"] > first["tokens_cached"]
    assert keystroke["timings/prompt_n"] < first["timings/prompt_n"]


def test_a_time_limit_on_writing_never_empties_the_answer(server):
    body = clients.llama_vim_fim(LINES, *CURSOR, [])
    free = infill(server, {**body, "t_max_predict_ms": 0, "id_slot": 3}).json()
    hurried = infill(server, {**body, "t_max_predict_ms": 1, "id_slot": 4}).json()
    assert hurried["content"] and hurried["content"] == free["content"]


def test_llama_vscode_warm_up_and_three_completions(server):
    chunk = {"text": "def helper(a, b):\n    return a + b\n", "time": 1733090000000, "filename": "/w/util.py"}
    url = llama_vscode_endpoint(server)
    warm = infill(server, clients.llama_vscode_warmup([chunk]), url).json()
    assert warm["content"] == "" and warm["tokens_predicted"] == 0 and warm["timings"]["prompt_n"] > 0
    results = infill(server, clients.llama_vscode_fim(LINES, *CURSOR, [chunk]), url).json()
    assert isinstance(results, list) and [r["index"] for r in results] == [0, 1, 2]
    assert results[0]["content"] and len({r["content"] for r in results}) == 1  # greedy: the same text
    first = results[0]
    assert first["tokens_cached"] > 0 and first["generation_settings"]["n_ctx"] > 0  # its status bar reads them
    assert first["timings"]["predicted_n"] == first["tokens_predicted"] >= 1


@pytest.mark.parametrize("config, path, body, text_of", [
    (0, "completion", clients.continue_llamacpp, lambda event: event.get("content", "")),
    (1, "completions", clients.continue_openai, lambda event: event["choices"][0]["text"]),
])
def test_continue_streams_what_the_engine_writes_inside_its_fim_prompt(server, local, tiny_anchored, config, path,
                                                                       body, text_of):
    [model] = yaml.safe_load(doc_configs.block("Continue", config))["models"]
    assert model["roles"] == ["autocomplete"] and model["provider"] == ("llama.cpp", "openai")[config]
    url = doc_configs.at(model["apiBase"].rstrip("/") + "/" + path, server.url)  # Continue adds the "/"
    name = str(tiny_anchored) if model["model"] == "default" else model["model"]  # "the --model you gave"
    prefix = "\n".join(LINES[:CURSOR[0]]) + "\n" + LINES[CURSOR[0]]
    suffix = "\n" + "\n".join(LINES[CURSOR[0] + 1:]) + "\n"
    prompt, full_prefix = clients.continue_prompt(prefix, suffix, "main.py", [("util.py", CHUNK["text"])])
    events = []
    with httpx.stream("POST", url, json=body(prompt, name), timeout=120) as reply:
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
        for line in reply.iter_lines():
            if line.startswith("data:") and line[5:].strip() != "[DONE]":
                events.append(json.loads(line[5:]))
    text = full_prefix + suffix
    params = DenoiseParams.fast().with_(temperature=0.01)
    expected = fill(local, text, [plan_completion(text, len(full_prefix))], params).edits[0].new_text
    assert expected and "".join(text_of(e) for e in events) == expected
    if path == "completion":
        assert events[-1]["stop"] is True and "timings" in events[-1]


@pytest.mark.slow
def test_llama_vim_defaults_on_the_bundled_model_get_at_least_the_rest_of_the_line():
    """What issue 25 measured: at a blank line of a real file (httpx's `_urlparse.py`), llama.vim's first
    request asks for 250 ms of writing, less than the prompt alone takes on a CPU; the answer still holds
    a line, and the warm-up before it answers 200."""
    lines = (Path(httpx.__file__).parent / "_urlparse.py").read_text().splitlines()
    y = next(y for y in range(120, len(lines) - 1) if not lines[y].strip() and lines[y + 1].startswith("    "))
    with EngineProcess(["--model", "default"], timeout=300) as engine:
        warm = infill(engine, clients.llama_vim_warmup([CHUNK]))
        assert warm.json() == {}
        first = accepted_by_llama_vim(infill(engine, clients.llama_vim_fim(lines, y, 0, [CHUNK])).text)
    assert first["content"].strip() and first["timings/predicted_n"] >= 1
    assert first["tokens_cached"] > 0  # the warm-up's chunk
