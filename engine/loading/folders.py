"""Where a model spec's files are: the bundled default, a local folder, or a Hugging Face repo id (fetched into
the hub's cache, only the files a load reads)."""

from __future__ import annotations

import os
from pathlib import Path

from engine.types import ModelLoadError

DEFAULT_MODEL_DIR = Path(__file__).resolve().parents[1] / "default_model"
DEFAULT_SPECS = ("default", "bundled", "")
HUB_FILES = [
    "config.json",
    "generation_config.json",
    "*.safetensors",
    "model.safetensors.index.json",
    "tokenizer*",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
]


def resolve_folder(spec: str | os.PathLike[str]) -> Path:
    text = str(spec)
    if text in DEFAULT_SPECS:
        if not (DEFAULT_MODEL_DIR / "config.json").exists():
            raise ModelLoadError(f"the bundled default model is not installed (expected {DEFAULT_MODEL_DIR})")
        return DEFAULT_MODEL_DIR
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelLoadError(f"model {text}: not a folder (give a Hugging Face model folder or repo id)")
        return path
    if text.count("/") == 1 and not text.startswith((".", "/", "~")):
        return _from_hub(text)
    raise ModelLoadError(f"model {text}: no such folder, and not a Hugging Face repo id (owner/name)")


def _from_hub(repo_id: str) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, allow_patterns=HUB_FILES))
    except LocalEntryNotFoundError:
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        why = "HF_HUB_OFFLINE is set" if offline else "the hub cannot be reached"
        raise ModelLoadError(f"model {repo_id}: not in the local Hugging Face cache and {why}") from None
    except (HfHubHTTPError, OSError) as exc:
        raise ModelLoadError(f"model {repo_id}: download failed ({exc.__class__.__name__}: {exc})") from None
