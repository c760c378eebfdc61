"""`dcomplete engine --ray`: a replayed editing workload against one replica, two replicas routed by
document, and two replicas routed to the least loaded (affinity off), on one local Ray cluster.

    python -m bench.engine_replicas [--model default] [--documents 6] [--requests 6] [--clients 3]

Each document is a real source file (bench.workload sources); its requests are llama.cpp `/infill`
completions at one code line as the user types it (the line removed, then a growing part of it), with
`id_slot` = the document's number, as llama.vim gives each buffer a slot. Each client is a thread that
owns some documents and sends their requests in turn, the next when the last is answered.

Per phase: requests/s over the phase, p50/p95 latency, the warm-hit rate the ingress counts
(`dcomplete_warm_hits_total` / `dcomplete_keyed_requests_total`: requests sent to the replica that
served their document before) and the engine's cached share (llama timings: tokens taken from the
document's cache over all prompt tokens), which shows whether the routing found the keys/values. Every
replica reserves one CPU and runs one torch thread; the phases run one after another in the same run.
The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from bench.workload import _body_line_starts, source_files
from tests.support.engine_process import EngineProcess

PHASES = (("1 replica", ["--replicas", "1"]), ("2, by document", ["--replicas", "2"]),
          ("2, least loaded", ["--replicas", "2", "--no-affinity"]))


def documents(count: int, requests: int) -> list[list[dict]]:
    """`count` documents' request bodies: a code line of each typed in `requests` steps (the line removed,
    then a growing part of it before the cursor), as an editor asks while the user types."""
    out: list[list[dict]] = []
    for path in source_files():
        text = path.read_text(encoding="utf-8")
        for start in _body_line_starts(text)[3::17]:
            line_end = text.find("\n", start)
            line = text[start:line_end]
            indent = start + len(line) - len(line.lstrip())
            typed = line.strip()
            if len(typed) < 2 * requests:
                continue
            cuts = [indent + len(typed) * k // requests for k in range(requests)]
            out.append([{"input_prefix": text[:cut], "input_suffix": text[line_end:], "n_predict": 16,
                         "id_slot": len(out)} for cut in cuts])
            break
        if len(out) == count:
            break
    return out


def counter(url: str, name: str) -> float:
    text = httpx.get(url + "/metrics", timeout=60).text
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def phase(url: str, docs: list[list[dict]], clients: int) -> dict[str, float]:
    latencies: list[float] = []
    cached, prompt = [0], [0]
    lock = threading.Lock()

    def client(mine: list[list[dict]]) -> None:
        with httpx.Client(timeout=600) as http:
            for round_ in range(max(len(d) for d in mine)):
                for doc in mine:
                    if round_ >= len(doc):
                        continue
                    started = time.perf_counter()
                    reply = http.post(url + "/infill", json=doc[round_])
                    if reply.status_code != 200:
                        raise RuntimeError(f"{url}: {reply.status_code} {reply.text}")
                    timings = reply.json()["timings"]
                    with lock:
                        latencies.append(time.perf_counter() - started)
                        cached[0] += timings["cache_n"]
                        prompt[0] += timings["cache_n"] + timings["prompt_n"]

    warm, keyed = counter(url, "dcomplete_warm_hits_total"), counter(url, "dcomplete_keyed_requests_total")
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, [docs[i::clients] for i in range(clients)]))
    wall = time.perf_counter() - started
    warm = counter(url, "dcomplete_warm_hits_total") - warm
    keyed = counter(url, "dcomplete_keyed_requests_total") - keyed
    q = statistics.quantiles(latencies, n=20, method="inclusive")
    return {"requests_per_s": len(latencies) / wall, "p50_s": statistics.median(latencies), "p95_s": q[18],
            "warm_hit_rate": warm / keyed if keyed else 0.0, "cached_share": cached[0] / max(1, prompt[0]),
            "requests": len(latencies), "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_replicas", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--documents", type=int, default=6)
    parser.add_argument("--requests", type=int, default=6, help="requests per document (default 6)")
    parser.add_argument("--clients", type=int, default=3)
    args = parser.parse_args(argv)
    import ray

    docs = documents(args.documents, args.requests)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    with socket.socket() as sock:  # Serve's proxy keeps the first port it was given for the cluster's life
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    rows: dict[str, dict[str, float]] = {}
    try:
        for name, flags in PHASES:
            args_ = ["--ray", ray.get_runtime_context().gcs_address, "--model", args.model, "--port", port, *flags]
            with EngineProcess(args_, timeout=600) as server:
                warmups = [{"input_prefix": "def f(x):\n    return ", "input_suffix": "\n", "n_predict": 4,
                            "id_slot": 1000 + i} for i in range(2)]
                with ThreadPoolExecutor(2) as pool:  # one cold request on each replica first
                    list(pool.map(lambda b: httpx.post(server.url + "/infill", json=b, timeout=600), warmups))
                rows[name] = phase(server.url, docs, args.clients)
    finally:
        ray.shutdown()
    print(f"model {args.model}; {len(docs)} documents x {args.requests} llama /infill requests, "
          f"{args.clients} clients; each replica 1 CPU, 1 torch thread")
    print(f"{'phase':>16} {'req/s':>6} {'p50 s':>6} {'p95 s':>6} {'warm-hit':>8} {'cached':>7} {'requests':>8}")
    for name, r in rows.items():
        print(f"{name:>16} {r['requests_per_s']:>6.2f} {r['p50_s']:>6.2f} {r['p95_s']:>6.2f} "
              f"{r['warm_hit_rate']:>8.2f} {r['cached_share']:>7.2f} {r['requests']:>8.0f}")
    print(json.dumps({"benchmark": "engine_replicas", "model": args.model, "documents": len(docs),
                      "requests_per_document": args.requests, "clients": args.clients,
                      "rows": {k: {m: round(v, 4) for m, v in r.items()} for k, r in rows.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
