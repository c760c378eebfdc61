"""Request and response bodies of the engine server, as msgspec structs.

Requests of the compatible shapes (OpenAI completions, FIM, llama.cpp `/infill`) ignore fields they do not
know, since their clients send many we have no use for; a known field of the wrong type is a 400 naming
it. The native `/v1/infill` shapes forbid unknown fields: a misspelt sampler knob must not pass silently.
`Params` has every field of `engine.DenoiseParams`, all optional (defaults: `DenoiseParams.fast()`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_type_hints

import msgspec

from engine.params import DenoiseParams


def _params_struct() -> type[msgspec.Struct]:
    """`Params`, built from the fields of DenoiseParams so the two never drift apart."""
    hints = get_type_hints(DenoiseParams)
    fields: list[tuple[str, Any, Any]] = [(name, hints[name] | None, None) for name in DenoiseParams.__dataclass_fields__]
    fields.append(("deadline_ms", int | None, None))
    return msgspec.defstruct("Params", fields, forbid_unknown_fields=True, omit_defaults=True,
                             module=__name__)


Params = _params_struct()


class Strict(msgspec.Struct, forbid_unknown_fields=True):
    pass


class ExtraChunk(msgspec.Struct):
    """Code from another file (llama.cpp's `input_extra` item; the `extra` field of the other shapes)."""

    text: str
    filename: str = ""


# -- native /v1/infill ------------------------------------------------------------------------


class SpotIn(Strict):
    start: int
    end: int
    n_masks: int
    kind: Literal["line", "block"]


class SlotIn(Strict):
    start: int
    end: int
    lead: str
    tail: int
    spot: SpotIn


class EndSpec(Strict):
    text: str
    language: str
    slot: SlotIn
    before: list[int] = []  # the slot's tokens kept ahead of the span in a retry canvas (infill.bans)
    deadline_ms: Annotated[int, msgspec.Meta(ge=1, le=600_000)] | None = None  # infill.line_deadline's limit


class CanvasIn(Strict):
    ids: list[int]
    doc_id: str | None = None
    max_grow: int = 0
    span_stops: list[list[int]] = []
    span_leads: list[str | None] = []
    span_ends: list[EndSpec | None] = []


class CanvasInfill(Strict):
    canvases: list[CanvasIn]
    params: Params = msgspec.field(default_factory=Params)  # type: ignore[valid-type]


class DocumentInfill(Strict):
    text: str
    language: str = "python"
    spots: list[SpotIn] | None = None
    holes: bool = False
    ranges: list[tuple[int, int]] | None = None
    params: Params = msgspec.field(default_factory=Params)  # type: ignore[valid-type]
    extra: list[ExtraChunk] = []


class SpanOut(msgspec.Struct):
    start: int
    end: int
    token_ids: list[int]


class StatsOut(msgspec.Struct):
    new_tokens: int
    forward_passes: int
    seconds: float
    positions: int


class CanvasOut(msgspec.Struct):
    canvas: list[int]
    spans: list[SpanOut]
    stats: StatsOut
    cancelled: bool


class CanvasInfillOut(msgspec.Struct):
    results: list[CanvasOut]


class EditOut(msgspec.Struct):
    start: int
    end: int
    new_text: str
    token_ids: list[int]


class DocumentInfillOut(msgspec.Struct):
    edits: list[EditOut]
    notes: list[str]
    stats: StatsOut
    cancelled: bool = False


class SpecialOut(msgspec.Struct):
    mask_id: int
    eos_id: int
    pad_id: int
    bos_id: int | None


class EngineInfo(msgspec.Struct):
    model: str
    family: str
    max_length: int
    left_to_right: bool
    max_right: int | None
    special: SpecialOut
    tokenizer_files: dict[str, str]
    device: str = ""


# -- compatible shapes (compat_apis) -------------------------------------------------------------------------


class _TextCompletion(msgspec.Struct, kw_only=True):
    model: str | None = None
    suffix: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: str | list[str] | None = None
    seed: int | None = None
    stream: bool = False
    language: str = "python"  # ours: neither shape has a language field
    extra: list[ExtraChunk] = []  # ours: code from other files, least relevant first, as in llama's input_extra


class Completions(_TextCompletion, kw_only=True):
    """OpenAI `POST /v1/completions` (the fields a completion with `suffix` uses)."""

    prompt: str | list[str]
    n: int = 1


class FimCompletions(_TextCompletion, kw_only=True):
    """Mistral-style `POST /v1/fim/completions` (DeepSeek-style clients send the same fields)."""

    prompt: str
    random_seed: int | None = None


class _LlamaRequest(msgspec.Struct, kw_only=True):
    """The fields llama-server's `/completion` and `/infill` share that dcomplete reads (tools/server/README.md
    of llama.cpp). Sampler names, `top_k`, `samplers`, `t_max_prompt_ms` (declared there, applied nowhere:
    `// TODO: implement` in its task params) and the rest are ignored, as llama-server ignores unknown ones."""

    n_predict: int = -1
    t_max_predict_ms: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] = []
    n_cmpl: int = 1
    id_slot: int = -1
    cache_prompt: bool = True
    response_fields: list[str] | None = None
    stream: bool = False
    model: str | None = None
    language: str = "python"  # ours: llama-server has no language field


class LlamaInfill(_LlamaRequest, kw_only=True):
    """llama.cpp server `POST /infill`."""

    input_prefix: str = ""
    input_suffix: str = ""
    input_extra: list[ExtraChunk] = []
    prompt: str = ""


class LlamaCompletion(_LlamaRequest, kw_only=True):
    """llama.cpp server `POST /completion`: a raw prompt (a FIM-templated one is split at its markers)."""

    prompt: str


# -- Tabby (its OpenAPI schema: tests/fixtures/tabby/openapi.json) ---------------------------------------


class TabbyDeclaration(msgspec.Struct):
    filepath: str
    body: str


class TabbySnippet(msgspec.Struct):
    filepath: str
    body: str
    score: float = 0.0


class TabbyEditHistory(msgspec.Struct, kw_only=True):
    """`segments.edit_history` of `mode: "next_edit_suggestion"`: the file before the user's edits, a unified
    diff of them, and the file now."""

    original_code: str
    edits_diff: str
    current_version: str


class TabbySegments(msgspec.Struct, kw_only=True):
    prefix: str
    suffix: str | None = None
    filepath: str | None = None
    git_url: str | None = None
    declarations: list[TabbyDeclaration] | None = None
    relevant_snippets_from_changed_files: list[TabbySnippet] | None = None
    relevant_snippets_from_recently_opened_files: list[TabbySnippet] | None = None
    clipboard: str | None = None
    edit_history: TabbyEditHistory | None = None


class TabbyCompletion(msgspec.Struct, kw_only=True):
    """Tabby `POST /v1/completions` (`CompletionRequest`); `mode` "standard" (the default) completes at the
    cursor, "next_edit_suggestion" answers the next version of `segments.edit_history.current_version`."""

    language: str | None = None
    segments: TabbySegments | None = None
    user: str | None = None
    temperature: float | None = None
    seed: int | None = None
    mode: str | None = None
    aggressiveness: str | None = None  # dcomplete's: how sure a next edit must be (low, medium, high)


class EditMessage(msgspec.Struct, kw_only=True):
    role: str
    content: str | list[dict[str, Any]] | None = None


class EditCompletions(msgspec.Struct, kw_only=True):
    """Inception's `POST /v1/edit/completions` (Mercury Edit; Continue's Next Edit sends it): the last user
    message holds the tagged sections (`edit_api`); a system message is read past. `language` and
    `aggressiveness` are dcomplete's (default: by the file's extension; "medium")."""

    messages: list[EditMessage]
    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stream: bool = False
    language: str | None = None
    aggressiveness: str | None = None


class TabbyEvent(msgspec.Struct, kw_only=True):
    """Tabby `POST /v1/events` (`LogEventRequest`)."""

    type: str
    completion_id: str
    choice_index: int
    view_id: str | None = None
    elapsed: int | None = None


# -- which shape a body has, read without building the rest of it -----------------------------------------


class CompletionsShape(msgspec.Struct):
    """`POST /v1/completions` is Tabby's when the body has `segments` and no `prompt`."""

    prompt: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    segments: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class NativeShape(msgspec.Struct):
    """`POST /v1/infill` is the canvas form when the body has `canvases`."""

    canvases: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class ErrorBody(msgspec.Struct):
    message: str
    type: str
    code: int


class ErrorOut(msgspec.Struct):
    error: ErrorBody
