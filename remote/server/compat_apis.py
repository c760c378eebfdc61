"""The request shapes other editor plugins already speak (OpenAI completions, Mistral-style FIM, llama.cpp
`/infill`) to and from `TextJob`.

A diffusion engine writes a gap's tokens all at once, so `stream: true` sends the completion as one
server-sent event followed by a final event with `finish_reason` and `data: [DONE]`, the framing OpenAI
clients expect.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import msgspec

from remote.server import schemas
from remote.server.service import RequestError, TextJob, TextOutcome, language, sampling


def _stops(stop: str | list[str] | None) -> tuple[str, ...]:
    if stop is None:
        return ()
    return (stop,) if isinstance(stop, str) else tuple(stop)


def completions_job(body: schemas.Completions) -> TextJob:
    prompt = body.prompt
    if isinstance(prompt, list):
        if len(prompt) != 1:
            raise RequestError(f"prompt: give one prompt (a string), got a list of {len(prompt)}")
        prompt = prompt[0]
    return TextJob(prompt, body.suffix or "", body.language, sampling(body.temperature, body.top_p, body.seed),
                   body.max_tokens, _stops(body.stop), body.n)


def fim_job(body: schemas.FimCompletions) -> TextJob:
    seed = body.random_seed if body.random_seed is not None else body.seed
    return TextJob(body.prompt, body.suffix or "", body.language, sampling(body.temperature, body.top_p, seed),
                   body.max_tokens, _stops(body.stop))


def llama_job(body: schemas.LlamaInfill) -> tuple[TextJob, int | None]:
    """The job and its deadline in ms (None: none). Other files' chunks go above the prefix, each under a comment line
    naming its file, where the window planner keeps as much of them as the context allows."""
    comment = language(body.language).comment_prefix
    extra = "".join(f"{comment} {c.filename}\n{c.text.rstrip(chr(10))}\n\n" for c in body.input_extra)
    max_tokens = None if body.n_predict < 0 else body.n_predict
    if max_tokens == 0:
        raise RequestError("n_predict: 0 asks for no tokens; give -1 (no limit) or a positive count")
    job = TextJob(extra + body.input_prefix + body.prompt, body.input_suffix, body.language,
                  sampling(body.temperature, body.top_p, body.seed), max_tokens, tuple(body.stop))
    deadline = body.t_max_predict_ms
    return job, deadline if deadline is not None and deadline > 0 else None  # llama.cpp: <= 0 is no limit


def _usage(outcome: TextOutcome) -> dict[str, int]:
    written = outcome.stats.new_tokens
    return {"prompt_tokens": outcome.prompt_tokens, "completion_tokens": written,
            "total_tokens": outcome.prompt_tokens + written}


def completions_body(outcome: TextOutcome, model: str) -> dict[str, Any]:
    return {
        "id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()), "model": model,
        "choices": [{"index": i, "text": text, "logprobs": None, "finish_reason": reason}
                    for i, (text, reason) in enumerate(zip(outcome.texts, outcome.finish_reasons))],
        "usage": _usage(outcome),
    }


def completions_events(outcome: TextOutcome, model: str) -> Iterator[bytes]:
    """Server-sent events: each choice's text, then its finish_reason, then [DONE]."""
    head = {"id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()), "model": model}
    for i, (text, reason) in enumerate(zip(outcome.texts, outcome.finish_reasons)):
        for piece, finish in ((text, None), ("", reason)):
            chunk = {**head, "choices": [{"index": i, "text": piece, "logprobs": None, "finish_reason": finish}]}
            yield b"data: " + msgspec.json.encode(chunk) + b"\n\n"
    yield b"data: [DONE]\n\n"


def fim_body(outcome: TextOutcome, model: str) -> dict[str, Any]:
    return {
        "id": uuid.uuid4().hex, "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": outcome.texts[0]},
                     "finish_reason": outcome.finish_reasons[0]}],
        "usage": _usage(outcome),
    }


def fim_events(outcome: TextOutcome, model: str) -> Iterator[bytes]:
    head = {"id": uuid.uuid4().hex, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    for delta, finish in (({"role": "assistant", "content": outcome.texts[0]}, None),
                          ({"content": ""}, outcome.finish_reasons[0])):
        chunk = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        yield b"data: " + msgspec.json.encode(chunk) + b"\n\n"
    yield b"data: [DONE]\n\n"


def llama_body(outcome: TextOutcome, model: str, seconds: float) -> dict[str, Any]:
    written = outcome.stats.new_tokens
    return {
        "content": outcome.texts[0], "model": model, "stop": True, "stopped_eos": outcome.finish_reasons[0] == "stop",
        "stopped_limit": outcome.finish_reasons[0] == "length", "truncated": outcome.finish_reasons[0] == "cancelled",
        "tokens_predicted": written, "tokens_evaluated": outcome.prompt_tokens, "tokens_cached": 0,
        "timings": {"predicted_n": written, "predicted_ms": seconds * 1000, "prompt_n": outcome.prompt_tokens,
                    "prompt_ms": 0.0, "forward_passes": outcome.stats.forward_passes},
    }
