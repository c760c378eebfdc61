"""`dcomplete engine --ray --replicas 2` as a real subprocess against a local Ray cluster that this module
starts on loopback (`ray.init(num_cpus=2)` here; the CLI is a second driver that deploys the Serve
application), with the tiny random anchored checkpoint: every endpoint answers through the ingress; one
document's requests land on one replica (the router's warm hits and the replica's own request counts, both
read from /metrics); the API key guards every endpoint but /health there too; a replica killed (`ray.kill` on its actor) while requests run loses none of them
(each is answered, retried on the other replica or refused with a 503), Ray Serve restarts it and the
service answers with two replicas again."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import DenoiseParams, Engine
from infill import Spot, fill
from tests.support.engine_process import EngineProcess
from tests.support.ray_cluster import local_cluster

LONG = 480  # masks of a slow canvas: one token a step, never an end token (about 2 s: the kill lands mid-run)
SLOW = {"threshold": 1.0, "eos_penalty": 100.0}
KEY = "replica-test-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
PREFIX, SUFFIX = "def add(a, b):\n    return ", "\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.fixture(scope="module")
def cluster(float32_keys_everywhere: None) -> Iterator[str]:
    with local_cluster() as address:
        yield address


@pytest.fixture(scope="module")
def service(cluster: str, tiny_anchored: Path) -> Iterator[EngineProcess]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = ["--ray", cluster, "--replicas", "2", "--model", str(tiny_anchored), "--port", str(port),
            "--api-key", KEY]
    with EngineProcess(args, timeout=300) as process:
        yield process


def post(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.post(url, headers=AUTH, **kwargs)


def get(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.get(url, headers=AUTH, **kwargs)


def samples(url: str, name: str) -> dict[str, float]:
    """Every sample of `name` in the ingress's /metrics, by its label text ("" for none)."""
    text = get(url + "/metrics", timeout=30).text
    return {m[1] or "": float(m[2]) for m in re.finditer(rf"^{re.escape(name)}(\{{[^}}]*\}})? (\S+)$", text, re.M)}


def grown(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}


def tabby(filepath: str, prefix: str = PREFIX) -> dict[str, Any]:
    return {"language": "python", "segments": {"prefix": prefix, "suffix": SUFFIX, "filepath": filepath}}


def test_every_endpoint_answers_through_the_ingress(service: EngineProcess, local: Engine) -> None:
    url = service.url
    openai = post(url + "/v1/completions", json={"prompt": PREFIX, "suffix": SUFFIX, "max_tokens": 8},
                        timeout=60).json()
    assert openai["object"] == "text_completion" and isinstance(openai["choices"][0]["text"], str)
    fim = post(url + "/v1/fim/completions", json={"prompt": PREFIX, "suffix": SUFFIX, "max_tokens": 8},
                     timeout=60).json()
    assert isinstance(fim["choices"][0]["message"]["content"], str)
    llama = post(url + "/infill", json={"input_prefix": PREFIX, "input_suffix": SUFFIX, "n_predict": 8,
                                              "id_slot": 0}, timeout=60).json()
    assert "content" in llama and llama["timings"]["prompt_n"] > 0
    streamed = post(url + "/infill", json={"input_prefix": PREFIX, "input_suffix": SUFFIX, "n_predict": 8,
                                                 "stream": True}, timeout=60)
    assert streamed.headers["content-type"].startswith("text/event-stream") and '"stop":true' in streamed.text
    answer = post(url + "/v1/completions", json=tabby("a.py"), timeout=60).json()
    assert answer["choices"][0]["index"] == 0
    document = post(url + "/v1/infill", json={"text": PREFIX + SUFFIX, "holes": False, "spots": [
        {"start": len(PREFIX), "end": len(PREFIX), "n_masks": 4, "kind": "line"}]}, timeout=60).json()
    assert document["stats"]["forward_passes"] > 0 and not document["cancelled"]
    sp = local.special
    ids = [sp.bos_id, *local.tokenizer.encode(PREFIX), sp.mask_id, sp.mask_id, *local.tokenizer.encode(SUFFIX)]
    canvas = post(url + "/v1/infill", json={"canvases": [{"ids": ids, "doc_id": "file:///c.py"}]},
                        timeout=60).json()
    assert len(canvas["results"][0]["canvas"]) >= len(ids) - 2
    assert get(url + "/v1/models", timeout=30).json()["data"][0]["id"]
    assert get(url + "/v1/health", timeout=30).json()["device"]
    health = get(url + "/health", timeout=30).json()
    assert health["status"] == "ok" and health["replicas_up"] == 2 and len(health["replicas"]) == 2
    assert health["model"] and len({r.get("pid") for r in health["replicas"]} - {None}) == 2  # two processes
    bad = post(url + "/v1/completions", json={"prompt": 3}, timeout=30)
    assert bad.status_code == 400 and "prompt" in bad.json()["error"]["message"]
    assert get(url + "/nowhere", timeout=30).status_code == 404
    metrics = get(url + "/metrics", timeout=30).text
    assert re.search(r'^dcomplete_requests_total\{endpoint="/infill",replica="\d",status="200"\} ', metrics, re.M)
    assert re.search(r'^dcomplete_routed_total\{kind="\w+",replica="\d"\} ', metrics, re.M)


def test_the_key_guards_every_endpoint_but_health(service: EngineProcess) -> None:
    url = service.url
    assert httpx.get(url + "/health", timeout=30).status_code == 200
    for path in ("/v1/models", "/metrics"):
        assert httpx.get(url + path, timeout=30).status_code == 401
    refused = httpx.post(url + "/v1/completions", json={"prompt": PREFIX}, timeout=30)
    assert refused.status_code == 401 and "Bearer" in refused.json()["error"]["message"]
    wrong = httpx.post(url + "/infill", json={"input_prefix": PREFIX}, headers={"Authorization": "Bearer no"},
                       timeout=30)
    assert wrong.status_code == 401


def test_the_language_servers_engine_url_client_writes_what_the_engine_writes(service: EngineProcess,
                                                                            local: Engine) -> None:
    from remote.client import RemoteEngine

    text = "a = 1  # one\nb = 2  # two\n"
    spots = [Spot(text.index(c) + len(c), text.index(c) + len(c), 6, "line") for c in ("# one", "# two")]
    expected = fill(local, text, spots, DenoiseParams.fast())
    for _ in range(2):  # the second time from its replica's cache
        got = fill(RemoteEngine(service.url, KEY), text, spots, DenoiseParams.fast(), doc_id="file:///lsp.py")
        assert [(e.start, e.new_text) for e in got.edits] == [(e.start, e.new_text) for e in expected.edits]


def test_one_documents_requests_land_on_one_replica(service: EngineProcess) -> None:
    url = service.url
    for document in ("one.py", "two.py", "three.py"):
        routed, served = samples(url, "dcomplete_routed_total"), samples(url, "dcomplete_requests_total")
        warm = samples(url, "dcomplete_warm_hits_total").get("", 0)
        for line in range(4):
            reply = post(url + "/v1/completions", json=tabby(document, f"# line {line}\n" + PREFIX), timeout=60)
            assert reply.status_code == 200
        assert samples(url, "dcomplete_warm_hits_total")[""] == warm + 3
        moved = grown(routed, samples(url, "dcomplete_routed_total"))
        replica = re.search(r'replica="(\d)"', next(iter(moved)))[1]  # type: ignore[index]
        assert moved == {f'{{kind="cold",replica="{replica}"}}': 1, f'{{kind="warm",replica="{replica}"}}': 3}
        served = {k: v for k, v in grown(served, samples(url, "dcomplete_requests_total")).items()
                  if "/metrics" not in k}  # the scrapes count themselves
        assert served == {f'{{endpoint="/v1/completions",replica="{replica}",status="200"}}': 4}


def _pid(url: str, replica: int) -> int | None:
    health = get(url + "/health", timeout=30).json()
    entry = health["replicas"][replica]
    return entry.get("pid") if entry["up"] else None


def test_a_replica_killed_under_load_loses_no_request_and_comes_back(service: EngineProcess, local: Engine) -> None:
    import ray

    url = service.url
    sp = local.special
    slow_ids = [sp.bos_id, *local.tokenizer.encode(PREFIX), *[sp.mask_id] * LONG, *local.tokenizer.encode(SUFFIX)]
    slow = {"canvases": [{"ids": slow_ids, "doc_id": "file:///victim.py"}], "params": SLOW}
    routed = samples(url, "dcomplete_routed_total")
    first = post(url + "/v1/infill", json={**slow, "params": {**SLOW, "deadline_ms": 50}}, timeout=120)
    assert first.status_code == 200
    [label] = grown(routed, samples(url, "dcomplete_routed_total"))
    victim = int(re.search(r'replica="(\d)"', label)[1])  # type: ignore[index]  # the document's replica
    old_pid = _pid(url, victim)
    failures, retries = samples(url, "dcomplete_replica_failures_total"), samples(url, "dcomplete_retries_total")
    stop = threading.Event()
    quick: list[int] = []

    def keep_asking() -> None:
        while not stop.is_set():
            quick.append(post(url + "/v1/completions", json=tabby("other.py"), timeout=120).status_code)

    with ThreadPoolExecutor(4) as pool:
        try:
            slow_calls = [pool.submit(post, url + "/v1/infill", json=slow, timeout=180) for _ in range(2)]
            asker = pool.submit(keep_asking)
            until = time.monotonic() + 60
            while samples(url, "dcomplete_running_rows").get(f'{{replica="{victim}"}}', 0) < 1:
                assert time.monotonic() < until, "the slow requests never ran on their replica"
                time.sleep(0.05)
            [actor] = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                       if f"#engine-{victim}#" in a["name"]]
            ray.kill(ray.get_actor(actor, namespace="serve"))
            answers = [call.result(timeout=180) for call in slow_calls]
        finally:
            stop.set()
        asker.result(timeout=180)
    for answer in answers:  # retried on the other replica, or refused: never lost, never hung
        assert answer.status_code in (200, 503), answer.text
        if answer.status_code == 200:
            assert answer.json()["results"][0]["stats"]["forward_passes"] > 0
    assert quick and set(quick) <= {200, 503}
    failed = grown(failures, samples(url, "dcomplete_replica_failures_total"))
    assert list(failed) == [f'{{replica="{victim}"}}'] and failed[f'{{replica="{victim}"}}'] >= 1
    assert grown(retries, samples(url, "dcomplete_retries_total")).get("", 0) >= 1  # sent to the other replica
    until = time.monotonic() + 180
    while (pid := _pid(url, victim)) is None or pid == old_pid:
        assert time.monotonic() < until, "Ray Serve did not bring the replica back"
        time.sleep(0.5)
    assert get(url + "/health", timeout=30).json()["replicas_up"] == 2
    assert post(url + "/v1/completions", json=tabby("after.py"), timeout=60).status_code == 200
