"""Client settings (the `dcomplete` section) as one typed struct.

Settings arrive in `initializationOptions` and `workspace/didChangeConfiguration`. Each key is
validated on its own, so one bad value costs only that key: it falls back to its default and the
problem is reported as a sentence naming the key.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from infill.context.builder import DEFAULT_TOKENS
from infill.languages import editor_language_ids

SECTION = "dcomplete"


class NextEditOptions(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """The `nextEdit` settings."""

    enabled: bool = True
    """Answer `textDocument/copilotInlineEdit`: the edit the user's last edit implies elsewhere."""
    aggressiveness: Literal["low", "medium", "high"] = "medium"
    """How sure the model must be before a next edit is shown: "low" shows fewer (the model must prefer the
    change by a wide margin), "high" more."""
    debounce_ms: Annotated[int, msgspec.Meta(ge=0, le=5000)] = 0
    """A next-edit request waits this long; a newer one in the window replaces it."""


class Settings(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """What the client may configure; field docs are the settings table of the README."""

    model: str = "default"
    """Checkpoint: "default" (bundled), a folder, or a Hugging Face repo id."""
    device: str = "auto"
    """"auto", "cpu", "cuda", "cuda:1", "mps"."""
    engine_url: str = ""
    """A `dcomplete engine` server (e.g. "http://gpu-box:8765") that denoises the canvases this server
    builds; `model` and `device` are then the engine's business. Empty: the model runs in this process."""
    engine_api_key: str = ""
    """Bearer token for `engineUrl` (an engine bound beyond loopback requires one)."""
    steps: Annotated[int, msgspec.Meta(ge=0, le=4096)] = 0
    """0: commit every token above `threshold` each step (fastest); N: the model family's own schedule
    over N steps (slower, reproduces published numbers)."""
    threshold: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] = 0.9
    """With steps 0, each step commits every masked position at least this confident (and the best one)."""
    block: Annotated[int, msgspec.Meta(ge=0, le=2048)] = 0
    """With steps 0: commit left to right within the first `block` masks of each span, which run as the
    only queries (cheaper steps on long spans); 0 makes every mask a candidate."""
    max_tokens: Annotated[int, msgspec.Meta(ge=1, le=2048)] = 64
    """Upper bound on the tokens of one completion."""
    debounce_ms: Annotated[int, msgspec.Meta(ge=0, le=5000)] = 0
    """Automatic inline requests wait this long; a newer keystroke in the window replaces them. 0 by
    default: a newer request already supersedes a running one (which stops at its next step), and any
    wait here adds to the latency of every suggestion; raise it to spend less compute while typing."""
    cache_mb: Annotated[int, msgspec.Meta(ge=0, le=65536)] = 256
    """MiB of model keys/values kept across requests for the documents used last (LRU by bytes); a closed
    document's are freed at once; 0 keeps none."""
    suggestion_cache: Annotated[int, msgspec.Meta(ge=0, le=4096)] = 64
    """Places whose suggestions are remembered (LRU), so coming back to one, undoing an edit or asking
    again there needs no model; 0 remembers none (typing through a shown suggestion still needs none)."""
    multiline: bool = True
    """Offer multi-line completions; off keeps only the first line."""
    automatic_until: Literal["statement", "block"] = "block"
    """Where a suggestion made while you type (an automatic trigger) stops: "statement" at its first complete
    statement or block header (the rest comes at the next pause, after you take it), "block" at the end of the
    block it writes. Invoked suggestions always run to the end of the block."""
    automatic_ms: Annotated[int, msgspec.Meta(ge=0, le=60000)] = 600
    """An automatic trigger's suggestion stops at the first line end, this many milliseconds after it began
    writing, where its text parses (llama-server's `t_max_predict_ms`): the rest comes at the next pause,
    after you take it. 0: no limit. A faster machine writes more within it; invoked suggestions have none."""
    languages: list[str] = msgspec.field(default_factory=editor_language_ids)
    """languageIds the server completes (default: every language of infill's table, under the ids
    VS Code and Neovim use); others get empty answers. An id without a row gets plain-text line
    completions (no parse check)."""

    context: bool = True
    """Put code from the rest of the workspace above the window: the definitions the file imports, code
    edited recently in other files, the file's own functions the window cuts off (`infill.context`)."""
    context_tokens: Annotated[int, msgspec.Meta(ge=0, le=8192)] = DEFAULT_TOKENS
    """Tokens that code may take (at most half the model's context is used); 0 turns it off."""
    context_files: list[str] = msgspec.field(default_factory=list)
    """Glob patterns of paths, relative to the workspace folder, never read for context ("secrets/*")."""
    next_edit: NextEditOptions = msgspec.field(default_factory=NextEditOptions)
    """Next edits (`nextEdit.enabled`, `nextEdit.aggressiveness`, `nextEdit.debounceMs`)."""

    @property
    def engine_device(self) -> str | None:
        return None if self.device == "auto" else self.device

    @property
    def engine_key(self) -> tuple[str, ...]:
        """What decides which engine serves requests: a change reloads or reconnects."""
        if self.engine_url:
            return ("remote", self.engine_url, self.engine_api_key)
        return ("local", self.model, self.device)

    @property
    def results_key(self) -> tuple[object, ...]:
        """What decides the text of a completion: a suggestion computed under other values is not
        reused."""
        return (*self.engine_key[:2], self.device, self.steps, self.threshold, self.block, self.max_tokens,
                self.multiline, self.automatic_until, self.automatic_ms, self.context, self.context_tokens,
                tuple(self.context_files))


FIELD_NAMES: dict[str, str] = {field.encode_name: field.name for field in msgspec.structs.fields(Settings)}


def _reason(error: msgspec.ValidationError) -> str:
    return str(error).split(" - at ")[0]


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from a client payload, plus one problem sentence per rejected key.

    `raw` may be the `dcomplete` section itself or an object holding it under `dcomplete`. Keys that
    are absent keep their value from `base` (defaults when None); invalid keys take the default.
    """
    base = base or Settings()
    if raw is None:
        return base, []
    if isinstance(raw, dict) and isinstance(raw.get(SECTION), dict):
        raw = raw[SECTION]
    if not isinstance(raw, dict):
        return base, [f"dcomplete settings must be an object, got {type(raw).__name__}; using defaults"]
    problems: list[str] = []
    accepted: dict[str, Any] = msgspec.structs.asdict(base)
    for key, value in raw.items():
        if key not in FIELD_NAMES:
            problems.append(f"dcomplete setting `{key}` is unknown; ignored")
            continue
        name = FIELD_NAMES[key]
        try:
            checked = msgspec.convert({key: value}, Settings)
        except msgspec.ValidationError as error:
            default = getattr(Settings(), name)
            problems.append(f"dcomplete setting `{key}` is invalid ({_reason(error)}); using {default!r}")
            accepted[name] = default
            continue
        accepted[name] = getattr(checked, name)
    return Settings(**accepted), problems
