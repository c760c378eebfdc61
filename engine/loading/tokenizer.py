"""A checkpoint's tokenizer and special token ids: `transformers`' tokenizer for a checkpoint folder, and
`FastTokenizer` for the tokenizer of a converted base, straight from the `tokenizers` library.

`transformers` takes seconds to import, and a one-line completion from the CLI should not pay that: the
bundled model's tokenizer is a plain `tokenizer.json` (written by `transformers` when the GGUF base is
converted), so `FastTokenizer` serves it with the Rust library alone. It offers the part of the
`transformers` tokenizer interface that dcomplete uses, with the same results (tests/engine compare the two
on real code and on every id), and `save_pretrained` writes files `transformers.AutoTokenizer` loads.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.types import ModelLoadError, SpecialTokens

FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")
ROLES = ("bos", "eos", "unk", "sep", "pad", "cls", "mask")


class FastTokenizer:
    def __init__(self, folder: str | Path) -> None:
        from tokenizers import Tokenizer

        self.folder = Path(folder)
        self.backend_tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        config_file = self.folder / "tokenizer_config.json"
        config: dict[str, Any] = json.loads(config_file.read_text()) if config_file.exists() else {}
        special: set[int] = set()
        for role in ROLES:
            token = _content(config.get(f"{role}_token"))
            found = self.backend_tokenizer.token_to_id(token) if token else None
            setattr(self, f"{role}_token_id", found)
            special |= {found} if found is not None else set()
        for token in config.get("additional_special_tokens") or config.get("extra_special_tokens") or []:
            found = self.backend_tokenizer.token_to_id(_content(token) or "")
            special |= {found} if found is not None else set()
        self.all_special_ids = sorted(special)
        """As `transformers` counts them: the tokens the config names (bos, eos, ...) and its additional
        special tokens, not every added token."""

    def __len__(self) -> int:
        return self.backend_tokenizer.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self.backend_tokenizer.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids: Sequence[int] | int, skip_special_tokens: bool = False,
               clean_up_tokenization_spaces: bool | None = None) -> str:
        """As `transformers` decodes for a byte-level BPE: the clean-up of spaces before punctuation, made
        for WordPiece, is never applied (it would change the code)."""
        ids = [ids] if isinstance(ids, int) else list(ids)
        return self.backend_tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def batch_decode(self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = False,
                     clean_up_tokenization_spaces: bool | None = None) -> list[str]:
        return self.backend_tokenizer.decode_batch([list(s) for s in sequences], skip_special_tokens=skip_special_tokens)

    def convert_tokens_to_ids(self, token: str) -> int | None:
        return self.backend_tokenizer.token_to_id(token)

    def convert_ids_to_tokens(self, ids: int) -> str | None:
        return self.backend_tokenizer.id_to_token(ids)

    def save_pretrained(self, folder: str | Path) -> None:
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            if (self.folder / name).exists():
                shutil.copyfile(self.folder / name, out / name)


def _content(token: object) -> str | None:
    """A token as tokenizer_config.json writes it: its text, or a dict holding it."""
    if isinstance(token, dict):
        token = token.get("content")
    return token if isinstance(token, str) else None


def special_tokens(cfg: dict[str, Any], tokenizer: Any, folder: Path) -> SpecialTokens:
    """Ids from config.json first, then the tokenizer; never from generation_config.json, whose
    mask_token_id is null in Dream's release (research/models.md §2.1)."""

    def first(*values: Any) -> int | None:
        for v in values:
            if isinstance(v, list):
                v = v[0] if v else None
            if v is not None:
                return int(v)
        return None

    mask = first(cfg.get("mask_token_id"), getattr(tokenizer, "mask_token_id", None))
    eos = first(cfg.get("eos_token_id"), getattr(tokenizer, "eos_token_id", None))
    if mask is None or eos is None:
        which = "mask" if mask is None else "EOS"
        raise ModelLoadError(f"model {folder}: no {which} token id in config.json or the tokenizer")
    pad = first(cfg.get("pad_token_id"), getattr(tokenizer, "pad_token_id", None), eos)
    bos = first(getattr(tokenizer, "bos_token_id", None), cfg.get("bos_token_id"), eos)
    assert pad is not None and bos is not None
    if pad == mask:
        raise ModelLoadError(f"model {folder}: pad and mask token ids are both {mask}")
    return SpecialTokens(mask_id=mask, eos_id=eos, pad_id=pad, bos_id=bos)


def load_tokenizer(spec: str | os.PathLike[str], folder: Path) -> Any:
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    # set_verbosity_error, but it is unannotated: AutoTokenizer warns about model types it does not know (Dream)
    hf_logging.set_verbosity(logging.ERROR)
    try:
        return AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False)
    except Exception as exc:  # transformers raises many unrelated types for a broken tokenizer
        raise ModelLoadError(f"model {spec}: cannot load its tokenizer {_tokenizer_file(folder)} "
                             f"({_one_line(exc)})") from None


def fast_tokenizer(spec: str | os.PathLike[str], folder: Path) -> Any:
    """The converted base's tokenizer without importing transformers (`FastTokenizer`)."""
    try:
        return FastTokenizer(folder)
    except Exception as exc:  # the tokenizers library raises its own exception types for a broken file
        raise ModelLoadError(f"model {spec}: cannot load its tokenizer {_tokenizer_file(folder)} "
                             f"({_one_line(exc)})") from None


def _tokenizer_file(folder: Path) -> Path:
    """The file a broken tokenizer most likely comes from: tokenizer.json when there is one."""
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json"):
        if (folder / name).exists():
            return folder / name
    return folder


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{exc.__class__.__name__}: {text[0]}" if text else exc.__class__.__name__
