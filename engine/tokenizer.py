"""The tokenizer of a converted base, straight from the `tokenizers` library.

`transformers` takes seconds to import, and a one-line completion from the CLI should not pay that: the
bundled model's tokenizer is a plain `tokenizer.json` (written by `transformers` when the GGUF base is
converted), so `FastTokenizer` serves it with the Rust library alone. It offers the part of the
`transformers` tokenizer interface that dcomplete uses, with the same results (tests/engine compare the two
on real code and on every id), and `save_pretrained` writes files `transformers.AutoTokenizer` loads.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
