"""The OpenAI-style request shapes other editor plugins already speak (OpenAI completions, Mistral-style FIM)
to and from `TextJob`. A completions prompt without `suffix` that a client laid out for a FIM model (Continue's
autocomplete does) is split at its markers (`fim_prompt`). llama.cpp's shapes are `llama_api`.

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
from remote.server.fim_prompt import split_fim
from remote.server.service import RequestError, TextJob, TextOutcome, extra_chunks, sampling


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
    prefix, suffix = (prompt, body.suffix) if body.suffix else split_fim(prompt) or (prompt, "")
    return TextJob(prefix, suffix, body.language, sampling(body.temperature, body.top_p, body.seed),
                   body.max_tokens, _stops(body.stop), body.n, extra=extra_chunks(body.extra))


def fim_job(body: schemas.FimCompletions) -> TextJob:
    seed = body.random_seed if body.random_seed is not None else body.seed
    return TextJob(body.prompt, body.suffix or "", body.language, sampling(body.temperature, body.top_p, seed),
                   body.max_tokens, _stops(body.stop), extra=extra_chunks(body.extra))


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
