"""The engine server under concurrent editors: shared batching on and off, 1, 4 and 16 clients.

    python -m bench.engine_server [--model default] [--clients 1,4,16] [--requests 3] [--threads 2]

Two `dcomplete engine` processes run side by side on loopback, one sharing batches between requests and
one with --no-batching (requests served one at a time). Each client is a thread that sends its requests
one after another (a new one when the last is answered) to OpenAI's /v1/completions: a completion at the
start of a code line inside a function of a real file (bench.workload sources), the line itself removed,
as an editor asks for it. For each number of clients the two servers are measured one after the other.

Aggregate tokens/s is the tokens the engine wrote for all requests over the wall time of the phase;
p50/p95 are request latencies. The speed-up is tokens/s with batching over without, at the same number
of clients, in the same run. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from bench.workload import _body_line_starts, package_versions, source_files
from tests.support.engine_process import EngineProcess


def requests_from_sources(count: int) -> list[dict]:
    """`count` completion bodies: prefix up to a body line's indentation, suffix after that line."""
    out: list[dict] = []
    for path in source_files():
        text = path.read_text(encoding="utf-8")
        for start in _body_line_starts(text)[5::11]:
            line_end = text.find("\n", start)
            if line_end < 0:
                continue
            cursor = start + len(text[start:line_end]) - len(text[start:line_end].lstrip())
            out.append({"prompt": text[:cursor], "suffix": text[line_end:]})
            if len(out) == count:
                return out
    return out


def phase(url: str, bodies: list[list[dict]]) -> dict[str, float]:
    """Every client (one list of bodies each) at once; tokens/s over the phase, latency percentiles."""
    latencies: list[float] = []
    tokens = [0]
    lock = threading.Lock()

    def client(mine: list[dict]) -> None:
        with httpx.Client(timeout=600) as http:
            for body in mine:
                started = time.perf_counter()
                reply = http.post(url + "/v1/completions", json=body)
                if reply.status_code != 200:
                    raise RuntimeError(f"{url}: {reply.status_code} {reply.text}")
                with lock:
                    latencies.append(time.perf_counter() - started)
                    tokens[0] += reply.json()["usage"]["completion_tokens"]

    started = time.perf_counter()
    with ThreadPoolExecutor(len(bodies)) as pool:
        list(pool.map(client, bodies))
    wall = time.perf_counter() - started
    q = statistics.quantiles(latencies, n=20, method="inclusive")
    return {"tokens_per_s": tokens[0] / wall, "p50_s": statistics.median(latencies), "p95_s": q[18],
            "requests": len(latencies), "tokens": tokens[0], "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--clients", default="1,4,16", help="numbers of concurrent clients (default 1,4,16)")
    parser.add_argument("--requests", type=int, default=3, help="requests each client sends (default 3)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of each server (default 2)")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.clients.split(",")]
    pool = requests_from_sources(max(counts) * args.requests + 1)
    common = ["--model", args.model, "--device", args.device, "--max-batch", str(max(counts))]
    rows: dict[str, dict[str, float]] = {}
    with EngineProcess(common, args.threads) as on, EngineProcess([*common, "--no-batching"], args.threads) as off:
        for server in (on, off):
            httpx.post(server.url + "/v1/completions", json=pool[-1], timeout=600).raise_for_status()  # warm-up
        for n in counts:
            bodies = [pool[i * args.requests : (i + 1) * args.requests] for i in range(n)]
            for mode, server in (("on", on), ("off", off)):
                rows[f"{n}/{mode}"] = phase(server.url, bodies)
    print(f"model {args.model} on {args.device}, {args.threads} torch threads per server; "
          f"{args.requests} requests per client, /v1/completions at a code line")
    print(f"{'clients':>7} {'batching':>8} {'tokens/s':>9} {'p50 s':>7} {'p95 s':>7} {'requests':>8} {'tokens':>7}")
    for key, r in rows.items():
        n, mode = key.split("/")
        print(f"{n:>7} {mode:>8} {r['tokens_per_s']:>9.1f} {r['p50_s']:>7.2f} {r['p95_s']:>7.2f} "
              f"{r['requests']:>8.0f} {r['tokens']:>7.0f}")
    speedups = {n: rows[f"{n}/on"]["tokens_per_s"] / rows[f"{n}/off"]["tokens_per_s"] for n in counts}
    print("speed-up of shared batching (tokens/s on / off): "
          + ", ".join(f"{n} clients {s:.2f}x" for n, s in speedups.items()))
    print(json.dumps({"benchmark": "engine_server", "model": args.model, "device": args.device,
                      "threads": args.threads, "requests_per_client": args.requests,
                      f"batching_speedup_{max(counts)}": round(speedups[max(counts)], 3),
                      "sources": package_versions(),
                      "rows": {k: {m: round(v, 4) for m, v in r.items()} for k, r in rows.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
