"""llama-server's `/infill` and `/completion`, as llama.cpp documents and implements them (tools/server/README.md
and tools/server/server-context.cpp, server-task.cpp, at llama.cpp commit fb40266 and README 00dc805):

- `n_predict: 0` evaluates the prompt into the slot's cache and writes nothing: 200 with empty `content`
  (llama.vim's and llama.vscode's warm-up while the user moves around);
- `t_max_predict_ms` limits the writing, measured from the first written token and applied at a line
  break, so a slow prompt never empties the answer (`infill.line_deadline`); `t_max_prompt_ms` is read by
  llama-server and applied nowhere, and is ignored here too;
- `id_slot` and `cache_prompt` name the document cache the request reuses and refills: one cache per slot
  (`-1`: one shared slot), none with `cache_prompt: false`;
- `response_fields` picks fields, a `a/b` path moved to the top level under its full name;
- `timings` are the engine's: the first step evaluates the prompt (`prompt_n`: tokens it ran, the rest came
  from the cache: `cache_n`, `tokens_cached`) and writes the first token; the later steps write the rest;
- `n_cmpl` > 1 answers a list; `stream: true` sends the answer as server-sent events (`content`, then a last
  event with `stop: true` and the timings), without `[DONE]`, as llama-server's non-OpenAI streams end.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from infill.context import Chunk
from remote.server import schemas
from remote.server.fim_prompt import split_fim
from remote.server.service import TextJob, TextOutcome, extra_chunks, sampling


def slot_doc(id_slot: int, cache_prompt: bool) -> str | None:
    """The document cache a request with this slot uses (None: `cache_prompt` is off)."""
    if not cache_prompt:
        return None
    return f"llama-slot:{id_slot if id_slot >= 0 else 'auto'}"


def _job(body: schemas.LlamaInfill | schemas.LlamaCompletion, prefix: str, suffix: str,
         extra: tuple[Chunk, ...] = ()) -> TextJob:
    max_tokens = None if body.n_predict < 0 else body.n_predict
    limit = body.t_max_predict_ms if body.t_max_predict_ms is not None and body.t_max_predict_ms > 0 else None
    return TextJob(prefix, suffix, body.language, sampling(body.temperature, body.top_p, body.seed), max_tokens,
                   tuple(body.stop), max(1, body.n_cmpl), slot_doc(body.id_slot, body.cache_prompt), limit,
                   extra)


def infill_job(body: schemas.LlamaInfill) -> TextJob:
    """`input_extra` chunks go above the text (`extra_context`); `prompt` is the text of the cursor's line
    before it, which llama-server puts after its FIM middle token."""
    return _job(body, body.input_prefix + body.prompt, body.input_suffix, extra_chunks(body.input_extra))


def completion_job(body: schemas.LlamaCompletion) -> TextJob:
    prefix, suffix = split_fim(body.prompt) or (body.prompt, "")
    return _job(body, prefix, suffix)


def timings(outcome: TextOutcome) -> dict[str, float | int]:
    stats = outcome.stats
    prompt_n, written = stats.prompt_positions, stats.new_tokens
    prompt_ms = stats.prompt_seconds * 1000
    predicted_ms = max(0.0, stats.step_seconds - stats.prompt_seconds) * 1000
    return {
        "cache_n": cached(outcome),
        "prompt_n": prompt_n, "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / prompt_n if prompt_n else 0.0,
        "prompt_per_second": 1000 * prompt_n / prompt_ms if prompt_ms else 0.0,
        "predicted_n": written, "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / written if written else 0.0,
        "predicted_per_second": 1000 * written / predicted_ms if predicted_ms else 0.0,
    }


def cached(outcome: TextOutcome) -> int:
    """Prompt tokens the first step did not run: the document cache supplied them."""
    return max(0, outcome.prompt_tokens - outcome.stats.prompt_positions) if outcome.stats.forward_passes else 0


_STOP_TYPE = {"stop": "eos", "length": "limit", "cancelled": "none"}


def result(outcome: TextOutcome, index: int, body: schemas.LlamaInfill | schemas.LlamaCompletion, model: str,
           n_ctx: int) -> dict[str, Any]:
    """One completion in llama-server's final shape, reduced to `response_fields` when given."""
    text, reason = outcome.texts[index], outcome.finish_reasons[index]
    stopping = next((s for s in body.stop if reason == "stop" and s and s in text), "")
    full = {
        "index": index, "content": text, "tokens": [], "id_slot": max(body.id_slot, 0), "stop": True,
        "model": model, "tokens_predicted": outcome.stats.new_tokens, "tokens_evaluated": outcome.prompt_tokens,
        "generation_settings": {"n_ctx": n_ctx, "n_predict": body.n_predict, "temperature": body.temperature or 0.0,
                                "top_p": body.top_p, "seed": body.seed, "stop": body.stop, "model": model,
                                "t_max_predict_ms": body.t_max_predict_ms or 0},
        "has_new_line": "\n" in text, "truncated": False,
        "stop_type": "word" if stopping else _STOP_TYPE[reason], "stopping_word": stopping,
        "tokens_cached": cached(outcome), "timings": timings(outcome),
    }
    return full if body.response_fields is None else pick(full, body.response_fields)


def pick(full: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """llama-server's `response_fields`: each `a/b` path that exists, at the top level under its full name."""
    out: dict[str, Any] = {}
    for path in paths:
        value: Any = full
        for key in path.split("/"):
            if not isinstance(value, dict) or key not in value:
                break
            value = value[key]
        else:
            out[path] = value
    return out


def answer(outcome: TextOutcome, body: schemas.LlamaInfill | schemas.LlamaCompletion, model: str,
           n_ctx: int) -> dict[str, Any] | list[dict[str, Any]]:
    results = [result(outcome, i, body, model, n_ctx) for i in range(len(outcome.texts))]
    return results[0] if len(results) == 1 else results


def events(outcome: TextOutcome, body: schemas.LlamaInfill | schemas.LlamaCompletion, model: str,
           n_ctx: int) -> Iterator[bytes]:
    """Each completion's text as one event, then its final event (empty content, `stop: true`)."""
    for i, text in enumerate(outcome.texts):
        partial = {"index": i, "content": text, "tokens": [], "stop": False, "id_slot": max(body.id_slot, 0),
                   "tokens_predicted": outcome.stats.new_tokens, "tokens_evaluated": outcome.prompt_tokens}
        yield b"data: " + msgspec.json.encode(partial) + b"\n\n"
        yield b"data: " + msgspec.json.encode({**result(outcome, i, body, model, n_ctx), "content": ""}) + b"\n\n"
