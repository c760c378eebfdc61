"""Client settings (the `dcomplete` section) as one typed struct.

Settings arrive in `initializationOptions` and `workspace/didChangeConfiguration`. Each key is
validated on its own, so one bad value costs only that key: it falls back to its default and the
problem is reported as a sentence naming the key.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from infill.languages import editor_language_ids

SECTION = "dcomplete"


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
    multiline: bool = True
    """Offer multi-line completions; off keeps only the first line."""
    languages: list[str] = msgspec.field(default_factory=editor_language_ids)
    """languageIds the server completes (default: every language of infill's table, under the ids
    VS Code and Neovim use); others get empty answers. An id without a row gets plain-text line
    completions (no parse check)."""

    @property
    def engine_device(self) -> str | None:
        return None if self.device == "auto" else self.device

    @property
    def engine_key(self) -> tuple[str, ...]:
        """What decides which engine serves requests: a change reloads or reconnects."""
        if self.engine_url:
            return ("remote", self.engine_url, self.engine_api_key)
        return ("local", self.model, self.device)


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
