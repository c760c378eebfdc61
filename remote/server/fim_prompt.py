"""Prefix and suffix back out of a prompt that a client already laid out for a fill-in-the-middle model.

Continue's autocomplete sends its `llama.cpp` provider (`/completion`) and its `openai` provider
(`/v1/completions`, `useLegacyCompletionsEndpoint`) one string built from a template chosen by the model's
name (core/autocomplete/templating/AutocompleteTemplate.ts); for a name it does not know, such as
`default`, that is StarCoder's `<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>`. dcomplete takes the
text before and after the cursor as they are, so the markers are split off instead of being read as code.
"""

from __future__ import annotations

# (before the prefix, between prefix and suffix, after the suffix), prefix-suffix-middle order
MARKERS = (
    ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"),  # StarCoder, StableCode (Continue's fallback)
    ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),  # Qwen2.5-Coder, CodeGemma
    ("<PRE> ", " <SUF>", " <MID>"),  # Code Llama
    ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),  # DeepSeek-Coder
)


def split_fim(prompt: str) -> tuple[str, str] | None:
    """(prefix, suffix) when `prompt` ends with one template's middle marker after its other two markers;
    None for a plain prompt. Text before the prefix marker (a repository header) stays in the prefix."""
    for begin, hole, end in MARKERS:
        if not prompt.endswith(end):
            continue
        body = prompt[: -len(end)]
        start, cut = body.find(begin), body.rfind(hole)
        if start < 0 or cut < start:
            continue
        return body[:start] + body[start + len(begin) : cut], body[cut + len(hole) :]
    return None
