"""`dcomplete engine` as a real subprocess on loopback, with a tiny random anchored checkpoint: the official
openai client (plain and streaming) writes what `dcomplete infill` writes; llama.cpp's /infill; the native
/v1/infill returns every spot, in both forms equal to infill in-process; 16 concurrent clients share
batches (read from /metrics); a disconnect, a supersede and a deadline stop their row; bad input gets its
status and a sentence while the server keeps serving; the key and the queue bound."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import httpx
import openai
import pytest

from engine import DenoiseParams, Engine, InfillRequest
from infill import Spot, fill, plan_completion
from infill.canvas import canvas_for, line_break_ids
from infill.languages import get_language
from infill.leads import TextLead
from infill.span_end import TextEnd
from tests.support.engine_process import EngineProcess

LONG = 600  # masks of a request that runs ~600 steps (one token a step, never an end token)
SLOW = {"threshold": 1.0, "eos_penalty": 100.0}


@pytest.fixture(scope="module")
def server(tiny_anchored):
    with EngineProcess(["--model", str(tiny_anchored), "--max-body", "200000"]) as process:
        yield process


def metric(url: str, name: str, labels: str = "", headers: dict | None = None) -> float:
    text = httpx.get(url + "/metrics", headers=headers).text
    match = re.search(rf"^{re.escape(name + labels)} (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def wait_for(condition, timeout: float = 20.0) -> None:
    until = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < until, "timed out"
        time.sleep(0.02)


def slow_canvas(engine: Engine, prompt: str = "def f(x):\n    return") -> dict:
    sp = engine.special
    ids = [sp.bos_id] + engine.tokenizer.encode(prompt) + [sp.mask_id] * LONG + engine.tokenizer.encode("\n")
    return {"canvases": [{"ids": ids}], "params": SLOW}


def test_the_openai_client_writes_what_dcomplete_infill_writes(server, local):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    model = client.models.list().data[0].id
    prompt, suffix = "x = 1  # the value is", "\ny = 2\n"
    plain = client.completions.create(model=model, prompt=prompt, suffix=suffix)
    streamed = list(client.completions.create(model=model, prompt=prompt, suffix=suffix, stream=True))
    # what `dcomplete infill a.py:1` does: plan at the end of line 1, fill with the CLI's defaults
    text = prompt + suffix
    written = fill(local, text, [plan_completion(text, len(prompt))], DenoiseParams.fast()).edits[0].new_text
    assert written and plain.choices[0].text == written
    assert "".join(c.choices[0].text for c in streamed) == written
    assert streamed[-1].choices[0].finish_reason == "stop"
    capped = client.completions.create(model=model, prompt=prompt, suffix=suffix, max_tokens=2)
    assert capped.usage.completion_tokens <= 2
    stopped = client.completions.create(model=model, prompt=prompt, suffix=suffix, stop=[written[2:4], "@@"])
    assert stopped.choices[0].text == written[: written.index(written[2:4])]
    two = client.completions.create(model=model, prompt=prompt, suffix=suffix, n=2, temperature=1.0, seed=5)
    assert [c.index for c in two.choices] == [0, 1]


def test_llama_cpp_infill_and_fim(server):
    extra = [{"filename": "util.py", "text": "def helper():\n    return 2\n"}]
    reply = httpx.post(server.url + "/infill", json={"input_prefix": "x = 1  # the value is", "input_suffix": "\n",
                                                     "input_extra": extra, "n_predict": 4, "t_max_predict_ms": 60000})
    body = reply.json()
    assert reply.status_code == 200 and isinstance(body["content"], str) and "\n" not in body["content"]
    assert 0 < body["tokens_predicted"] <= 4 and not body["truncated"] and body["timings"]["predicted_ms"] > 0
    fim = httpx.post(server.url + "/v1/fim/completions", json={"prompt": "x = 1  # the value is", "suffix": "\n"})
    assert fim.status_code == 200 and fim.json()["choices"][0]["message"]["role"] == "assistant"


DOC = "a = 1  # one\nb = 2  # two\nc = 3  # three\n"
SPOTS = [Spot(DOC.index(line) + len(line), DOC.index(line) + len(line), 6, "line") for line in
         ("# one", "# two", "# three")]


def test_native_multi_spot_document_returns_every_spot_as_infill_does(server, local):
    spots = [{"start": s.start, "end": s.end, "n_masks": s.n_masks, "kind": s.kind} for s in SPOTS]
    reply = httpx.post(server.url + "/v1/infill", json={"text": DOC, "spots": spots}).json()
    expected = fill(local, DOC, SPOTS, DenoiseParams.fast())
    assert [(e["start"], e["new_text"], e["token_ids"]) for e in reply["edits"]] == [
        (e.start, e.new_text, list(e.token_ids)) for e in expected.edits]
    assert [e["start"] for e in reply["edits"]] == [s.start for s in SPOTS]
    assert reply["stats"]["forward_passes"] == expected.stats.forward_passes


@pytest.mark.parametrize("before", ["", "    return"])
def test_native_canvas_with_leads_and_span_ends_is_what_the_engine_writes(server, local, before):
    """`before`: a retry's span end decodes the tokens kept ahead of the span with what it writes."""
    spec = get_language("python")
    kept = local.tokenizer.encode(before) if before else []
    canvas = canvas_for(local, DOC, SPOTS)
    breaks = line_break_ids(local.tokenizer)
    slots = [{"start": s.start, "end": s.end, "lead": s.lead, "tail": s.tail,
              "spot": {"start": s.spot.start, "end": s.spot.end, "n_masks": s.spot.n_masks, "kind": s.spot.kind}}
             for s in canvas.slots]
    body = {"canvases": [{"ids": list(canvas.ids), "max_grow": 8, "span_stops": [sorted(breaks)] * len(slots),
                          "span_leads": [s.lead or None for s in canvas.slots],
                          "span_ends": [{"text": DOC, "language": "python", "slot": slot, "before": kept}
                                        for slot in slots]}]}
    reply = httpx.post(server.url + "/v1/infill", json=body).json()["results"][0]
    row = InfillRequest(list(canvas.ids), None, 8, (breaks,) * len(slots),
                        tuple(TextLead(s.lead, local.tokenizer) if s.lead else None for s in canvas.slots),
                        tuple(TextEnd(s, DOC, spec, local.tokenizer, before=kept) for s in canvas.slots))
    expected = local.infill([row], DenoiseParams.fast())[0]
    assert reply["canvas"] == expected.canvas and not reply["cancelled"]
    assert [s["token_ids"] for s in reply["spans"]] == [s.token_ids for s in expected.spans]
    assert len(reply["spans"]) == len(SPOTS)


def test_sixteen_concurrent_clients_share_batches(server, local):
    sp = local.special
    prompts = [f"def f{i}(x):\n    return x + {i}" for i in range(16)]
    bodies = [{"canvases": [{"ids": [sp.bos_id] + local.tokenizer.encode(p) + [sp.mask_id] * 24}],
               "params": SLOW} for p in prompts]
    forwards = metric(server.url, "dcomplete_engine_forwards_total")
    steps = metric(server.url, "dcomplete_batch_rows_count")
    single = metric(server.url, "dcomplete_batch_rows_bucket", '{le="1.0"}')
    barrier = threading.Barrier(16)

    def client(body: dict) -> dict:
        barrier.wait()
        return httpx.post(server.url + "/v1/infill", json=body, timeout=120).json()["results"][0]

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(client, bodies))
    ran = metric(server.url, "dcomplete_engine_forwards_total") - forwards
    assert all(not r["cancelled"] and r["stats"]["forward_passes"] == 24 for r in results)
    assert 24 <= ran < sum(r["stats"]["forward_passes"] for r in results) / 2
    shared = (metric(server.url, "dcomplete_batch_rows_count") - steps
              - (metric(server.url, "dcomplete_batch_rows_bucket", '{le="1.0"}') - single))
    assert shared > 0  # steps that ran more than one row


def _left(server, reason: str) -> float:
    return metric(server.url, "dcomplete_rows_left_total", f'{{reason="{reason}"}}')


def test_a_client_that_disconnects_leaves_the_batch(server, local):
    forwards, left = metric(server.url, "dcomplete_engine_forwards_total"), _left(server, "disconnect")
    payload = json.dumps(slow_canvas(local)).encode()
    url = urlparse(server.url)
    sock = socket.create_connection((url.hostname, url.port))
    sock.sendall(b"POST /v1/infill HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
    wait_for(lambda: metric(server.url, "dcomplete_running_rows") == 1)
    time.sleep(0.2)
    sock.close()
    wait_for(lambda: _left(server, "disconnect") == left + 1)
    ran = metric(server.url, "dcomplete_engine_forwards_total")
    time.sleep(0.3)
    assert metric(server.url, "dcomplete_engine_forwards_total") == ran  # nothing runs any more
    assert ran - forwards < LONG
    assert httpx.get(server.url + "/health").status_code == 200


def test_a_newer_request_with_the_same_supersede_key_stops_the_older(server, local):
    left = _left(server, "supersede")
    headers = {"X-Dcomplete-Supersede": "file:///a.py"}
    with ThreadPoolExecutor(1) as pool:
        older = pool.submit(httpx.post, server.url + "/v1/infill", json=slow_canvas(local), headers=headers,
                            timeout=120)
        wait_for(lambda: metric(server.url, "dcomplete_running_rows") == 1)
        newer = httpx.post(server.url + "/v1/infill", json={"text": DOC, "spots": [
            {"start": SPOTS[0].start, "end": SPOTS[0].end, "n_masks": 4, "kind": "line"}]}, headers=headers,
            timeout=120)
        stopped = older.result().json()["results"][0]
    assert stopped["cancelled"] and stopped["stats"]["forward_passes"] < LONG
    assert newer.status_code == 200 and not newer.json()["cancelled"]
    assert _left(server, "supersede") == left + 1


def test_a_deadline_stops_the_row(server, local):
    body = slow_canvas(local)
    body["params"]["deadline_ms"] = 300
    started = time.monotonic()
    result = httpx.post(server.url + "/v1/infill", json=body, timeout=120).json()["results"][0]
    assert result["cancelled"] and 0 < result["stats"]["forward_passes"] < LONG
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("path, body, status, says", [
    ("/v1/completions", b'{"prompt": "x = ', 400, "not valid JSON"),
    ("/v1/completions", b'{"prompt": "x", "max_tokens": "many"}', 400, "$.max_tokens"),
    ("/v1/completions", b'{"prompt": "x", "model": "gpt-4"}', 404, "'gpt-4'"),
    ("/v1/completions", b'{"prompt": "x", "n": 0}', 400, "n 0"),
    ("/v1/completions", b'{"prompt": "x", "temperature": -1}', 400, "temperature"),
    ("/v1/completions", b'{"prompt": "x = 1  # a", "n": 100, "temperature": 1.0}', 400, "100 rows"),
    ("/v1/infill", b'{"canvases": [{"ids": [1, 2]}]}', 400, "canvases[0].ids"),
    ("/v1/infill", b'{"canvases": [{"ids": [1]}], "params": {"threshhold": 0.5}}', 400, "threshhold"),
    ("/v1/infill", b'{"text": "x = 1\\n", "spots": [], "holes": true}', 400, "exactly one of"),
    ("/v1/infill", b'{"text": "x = 1\\n", "holes": true, "language": "cobol"}', 400, "language"),
    ("/v1/nothing", b"{}", 404, "/v1/nothing"),
    ("/v1/completions", b'{"prompt": "' + b"x" * 300_000 + b'"}', 413, "--max-body"),
])
def test_bad_input_gets_its_status_and_a_sentence(server, path, body, status, says):
    reply = httpx.post(server.url + path, content=body, headers={"Content-Type": "application/json"})
    error = reply.json()["error"]
    assert reply.status_code == status == error["code"] and says in error["message"]
    assert httpx.get(server.url + "/health").json()["status"] == "ok"


def test_a_key_guards_every_endpoint_but_health_and_the_queue_is_bounded(tiny_anchored, local):
    with EngineProcess(["--model", str(tiny_anchored), "--api-key", "s3cret", "--max-queue", "1",
                        "--max-batch", "1"]) as server:
        assert httpx.get(server.url + "/health").status_code == 200
        for given in ({}, {"Authorization": "Bearer wrong"}):
            reply = httpx.get(server.url + "/v1/models", headers=given)
            assert reply.status_code == 401 and "--api-key" in reply.json()["error"]["message"]
        key = {"Authorization": "Bearer s3cret"}
        body = slow_canvas(local)
        body["params"]["deadline_ms"] = 5000  # long enough for the third request to find both rows taken
        with ThreadPoolExecutor(2) as pool:
            running = pool.submit(httpx.post, server.url + "/v1/infill", json=body, headers=key, timeout=60)
            wait_for(lambda: metric(server.url, "dcomplete_running_rows", "", key) == 1)
            waiting = pool.submit(httpx.post, server.url + "/v1/infill", json=body, headers=key, timeout=60)
            wait_for(lambda: metric(server.url, "dcomplete_queue_rows", "", key) == 1)
            refused = httpx.post(server.url + "/v1/infill", json=body, headers=key)
            assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
            assert "busy" in refused.json()["error"]["message"]
            assert running.result().status_code == waiting.result().status_code == 200


def test_a_non_loopback_bind_without_a_key_is_refused():
    run = subprocess.run([sys.executable, "-m", "cli", "engine", "--host", "0.0.0.0"], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "DCOMPLETE_API_KEY": ""})
    assert run.returncode == 2 and "--api-key" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_the_document_cache_s_bytes_are_a_metric(server, local):
    """A canvas with a `doc_id` leaves its document's keys and values in the engine's cache for the next
    request; `dcomplete_document_cache_bytes` says how much memory that keeps (an operator's view of why a
    server's resident memory grew)."""
    before = metric(server.url, "dcomplete_document_cache_bytes")
    sp = local.special
    ids = [sp.bos_id] + local.tokenizer.encode("def metric_document(x):\n    return x * 7 + 1\n" * 6) + [sp.mask_id] * 4
    reply = httpx.post(server.url + "/v1/infill", json={"canvases": [{"ids": ids, "doc_id": "metric-doc"}]}, timeout=120)
    assert reply.status_code == 200, reply.text
    assert metric(server.url, "dcomplete_document_cache_bytes") > before
