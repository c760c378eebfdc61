"""The request bodies editor plugins send with their default settings, rebuilt from their sources (each
function names the file and commit it follows; nothing of theirs is copied, only the shape of what goes on
the wire), for replay tests against a real `dcomplete engine`.

- llama.vim, ggml-org/llama.vim a1c8e6e40cb45df59b78add5b65d575386832465, autoload/llama.vim:
  `s:ring_update` (warm-up), `s:fim_ctx_local` + `llama#fim` (completion; speculative with `prev`).
- llama.vscode, ggml-org/llama.vscode 3938fb3568b98e3ddfcf2ce3dd52d9570552b579 (v0.0.63):
  src/llama-server.ts `createRequestPayload`, src/completion.ts, package.json defaults.
- Continue, continuedev/continue d0a3c0b626b5bebc3bef4742eec05a0242be0bab: core/llm/llms/LlamaCpp.ts
  (`/completion`), core/llm/llms/OpenAI.ts `_legacystreamComplete` (`/completions`), the prompt from
  core/autocomplete/templating (StarCoder's template for an unknown model name, snippets as comments).
"""

from __future__ import annotations

from typing import Any

LLAMA_VIM_FIELDS = ["content", "timings/prompt_n", "timings/prompt_ms", "timings/prompt_per_token_ms",
                    "timings/prompt_per_second", "timings/predicted_n", "timings/predicted_ms",
                    "timings/predicted_per_token_ms", "timings/predicted_per_second", "truncated", "tokens_cached"]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def llama_vim_warmup(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """`s:ring_update`: the ring buffer's chunks, evaluated into slot 0 ahead of the next completion."""
    return {"id_slot": 0, "input_prefix": "", "input_suffix": "", "input_extra": chunks, "prompt": "",
            "n_predict": 0, "temperature": 0.0, "samplers": [], "stream": False, "cache_prompt": True,
            "t_max_prompt_ms": 1, "t_max_predict_ms": 1, "response_fields": [""]}


def llama_vim_fim(lines: list[str], y: int, x: int, chunks: list[dict[str, Any]],
                  prev: list[str] | None = None) -> dict[str, Any]:
    """`llama#fim` at line `y` (0-based), column `x`, defaults n_prefix 256, n_suffix 64, n_predict 128,
    t_max_prompt_ms 500; 250 ms to predict for a first request, 1000 for a speculative one (`prev`: the
    suggestion shown, taken as accepted)."""
    if not prev:
        current = lines[y]
        blank = not current.strip()
        cur_prefix, cur_suffix = ("", "") if blank else (current[:x], current[x:])
        indent = 0 if blank else _indent(current)
        before = lines[max(0, y - 256):y]
    else:
        current = lines[y] + prev[0] if len(prev) == 1 else prev[-1]
        cur_prefix, cur_suffix, indent = current, "", _indent(lines[y])
        before = lines[max(0, y - 256 + len(prev) - 1):y]
        if len(prev) > 1:
            before = before + [lines[y] + prev[0], *prev[1:-1]]
    after = lines[y + 1:y + 1 + 64]
    return {
        "id_slot": 0, "input_prefix": "\n".join(before) + "\n", "input_suffix": cur_suffix + "\n" + "\n".join(after)
        + "\n", "input_extra": chunks, "prompt": cur_prefix, "n_predict": 128, "stop": [], "n_indent": indent,
        "top_k": 40, "top_p": 0.90, "samplers": ["top_k", "top_p", "infill"], "stream": False, "cache_prompt": True,
        "t_max_prompt_ms": 500, "t_max_predict_ms": 1000 if prev else 250, "response_fields": LLAMA_VIM_FIELDS,
    }


def llama_vim_chunk(lines: list[str], filename: str) -> dict[str, Any]:
    """A ring-buffer chunk (`s:ring_get_extra`): its lines joined with a final line break."""
    return {"text": "\n".join(lines) + "\n", "time": [1733, 90000], "filename": filename}


def llama_vscode_warmup(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """`updateExtraContext` -> `createRequestPayload(noPredict=true, "", "", chunks, "")`."""
    return {"id_slot": 0, "input_prefix": "", "input_suffix": "", "input_extra": chunks, "prompt": "",
            "n_predict": 0, "samplers": [], "cache_prompt": True, "t_max_prompt_ms": 500, "t_max_predict_ms": 1}


def llama_vscode_fim(lines: list[str], y: int, x: int, chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """`getFIMCompletion` from src/completion.ts's context, package.json defaults: n_prefix 256, n_suffix 64,
    n_predict 128, max_parallel_completions 3, t_max_prompt_ms 500, t_max_predict_ms 500."""
    current = lines[y]
    prompt = current[:x] if current[:x].strip() else ""
    before = lines[max(0, y - 256):y]
    after = lines[y + 1:min(len(lines) - 1, y + 64) + 1]
    body: dict[str, Any] = {
        "id_slot": 0, "input_prefix": "\n".join(before) + "\n", "input_suffix": current[x:] + "\n" + "\n".join(after)
        + "\n", "input_extra": chunks, "prompt": prompt, "n_predict": 128, "n_cmpl": 3, "top_k": 40, "top_p": 0.99,
        "stream": False, "samplers": ["top_k", "top_p", "infill"], "cache_prompt": True,
    }
    if _indent(current):
        body["n_indent"] = _indent(current)
    body.update({"t_max_prompt_ms": 500, "t_max_predict_ms": 500})
    return body


CONTINUE_STOPS = ["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<file_sep>", "<|endoftext|>", "</fim_middle>",
                  "</code>", "/src/", "#- coding: utf-8", "```"]


def continue_prompt(prefix: str, suffix: str, filepath: str, snippets: list[tuple[str, str]]) -> tuple[str, str]:
    """(the prompt, the prefix it carries): snippets and the file's path as `#` comments above the prefix,
    in StarCoder's template."""
    commented = ["\n".join(f"# {line}" for line in f"Path: {path}\n{body}".strip().split("\n"))
                 for path, body in snippets]
    formatted = "\n".join(commented) + f"\n# {filepath}"
    full_prefix = formatted + "\n" + prefix
    return f"<fim_prefix>{full_prefix}<fim_suffix>{suffix or chr(10)}<fim_middle>", full_prefix


def continue_llamacpp(prompt: str, model: str) -> dict[str, Any]:
    """LlamaCpp `_streamComplete`: `POST {apiBase}completion`, autocomplete's options (maxTokens 4096, the
    default; temperature 0.01, set by CompletionProvider when unset)."""
    return {"model": model, "prompt": prompt, "stream": True, "n_predict": 4096, "stop": CONTINUE_STOPS,
            "temperature": 0.01}


def continue_openai(prompt: str, model: str) -> dict[str, Any]:
    """OpenAI `_legacystreamComplete` (CompletionProvider sets `useLegacyCompletionsEndpoint`):
    `POST {apiBase}completions`."""
    return {"model": model, "max_tokens": 4096, "temperature": 0.01, "stream": True, "stop": CONTINUE_STOPS,
            "prompt": prompt}
