"""llama.vim's requests, with its default settings, against `dcomplete engine`: does a completion come back,
and what does its warm-up buy?

    python -m bench.llama_vim [--model default] [--threads 2] [--line N]

One engine on loopback. The file is httpx's `_urlparse.py` (from the installed httpx), the cursor on a
blank line inside a function; one ring chunk from httpx's `_urls.py`, as llama.vim gathers them. In one run,
side by side, llama.vim's exact bodies (tests/engine_server/client_requests.py, from llama.vim a1c8e6e):

1. cold: its completion request on a slot whose cache holds nothing of this text (`id_slot` 1);
2. warm-up: its ring-buffer request (`n_predict: 0`, the chunk only) on slot 0;
3. first keystroke after the warm-up: the same completion request on slot 0;
4. next keystrokes: the completion's first word and the character after it typed (mid-word dcomplete plans
   no completion, as for every front door), the request sent again.

The table gives each request's wall time, the prompt tokens the engine ran and reused (`timings/prompt_n`,
`tokens_cached`) and the time it spent on them (`timings/prompt_ms`), and the completion. The last line is
JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import httpx

from tests.engine_server import client_requests as clients
from tests.support.engine_process import EngineProcess


def blank_line(lines: list[str], after: int) -> int:
    """The first blank line at or after `after` that sits inside an indented block."""
    for y in range(after, len(lines) - 1):
        if not lines[y].strip() and lines[y + 1].startswith("    "):
            return y
    raise SystemExit(f"no blank line inside a block after line {after + 1}")


def timed(http: httpx.Client, url: str, body: dict) -> tuple[dict, float, int]:
    started = time.perf_counter()
    reply = http.post(url + "/infill", json=body)
    return reply.json(), (time.perf_counter() - started) * 1000, reply.status_code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--line", type=int, default=120, help="look for the blank line from this line (1-based)")
    args = parser.parse_args()

    folder = Path(httpx.__file__).parent
    lines = (folder / "_urlparse.py").read_text().splitlines()
    y = blank_line(lines, args.line - 1)
    chunk = clients.llama_vim_chunk((folder / "_urls.py").read_text().splitlines()[20:52], "httpx/_urls.py")
    rows = []
    with EngineProcess(["--model", args.model], threads=args.threads, timeout=600) as engine, \
            httpx.Client(timeout=600) as http:
        cold, cold_ms, _ = timed(http, engine.url, {**clients.llama_vim_fim(lines, y, 0, [chunk]), "id_slot": 1})
        rows.append(("cold (slot 1)", cold, cold_ms))
        warm, warm_ms, warm_status = timed(http, engine.url, clients.llama_vim_warmup([chunk]))
        rows.append((f"warm-up: {warm_status} {json.dumps(warm)}", {}, warm_ms))
        first, first_ms, _ = timed(http, engine.url, clients.llama_vim_fim(lines, y, 0, [chunk]))
        rows.append(("after the warm-up (slot 0)", first, first_ms))
        typed = list(lines)
        typed_word = re.match(r"\s*\w+\W", (first.get("content") or "").split("\n")[0] + " ")
        typed[y] = typed_word.group(0) if typed_word else "    r"  # its first word and the next character
        nxt, next_ms, _ = timed(http, engine.url, clients.llama_vim_fim(typed, y, len(typed[y]), [chunk]))
        rows.append((f"next keystroke ({typed[y]!r} typed)", nxt, next_ms))

    print(f"httpx/_urlparse.py line {y + 1} (blank), llama.vim defaults (n_predict 128, t_max_predict_ms 250)")
    print("| request | wall ms | prompt_n | tokens_cached | prompt_ms | predicted_n | completion |")
    print("|---|---|---|---|---|---|---|")
    for name, body, ms in rows:
        print(f"| {name} | {ms:.0f} | {body.get('timings/prompt_n', '')} | {body.get('tokens_cached', '')} | "
              f"{body.get('timings/prompt_ms', 0):.0f} | {body.get('timings/predicted_n', '')} | "
              f"{json.dumps(body.get('content', ''))} |")
    print(json.dumps({
        "line": y + 1, "cold_ms": round(cold_ms), "cold_content": cold.get("content"), "warmup_ms": round(warm_ms),
        "warmup_status": warm_status, "after_warmup_ms": round(first_ms),
        "after_warmup_prompt_ms": round(first.get("timings/prompt_ms", 0)),
        "cold_prompt_ms": round(cold.get("timings/prompt_ms", 0)), "tokens_cached": first.get("tokens_cached"),
        "next_keystroke_ms": round(next_ms), "next_prompt_ms": round(nxt.get("timings/prompt_ms", 0)),
        "next_tokens_cached": nxt.get("tokens_cached"), "threads": args.threads,
    }))


if __name__ == "__main__":
    main()
