"""Byte-level BPE tokenizer for the default model, trained on the corpus with `tokenizers`.

Pre-tokenisation is shaped for code: a run of spaces/tabs that is not a single space before a word is its
own piece (so 4/8/12-space indents become single tokens and never glue onto the keyword after them),
each newline is its own piece (line-boundary cuts tokenise the same alone as in context), identifiers keep
their underscores and digits, and punctuation runs stay together. Byte-level, no normaliser: decoding
returns the exact input bytes (tabs, CRLF, any Unicode).

Encoding never adds special tokens (there is no post-processor; `add_bos_token` is False): the engine
builds canvases itself, prepending `<|beginoftext|>` where the model needs it.

Run `python -m engine.training.tokenizer [--vocab-size N]`; it writes corpus_cache/tokenizer/ and the
token counts into the corpus manifest.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from engine.training.corpus import CACHE, CORPUS_DIR, MANIFEST, write_json_atomic

EOS = "<|endoftext|>"
BOS = "<|beginoftext|>"
MASK = "<|mask|>"
SPECIAL_TOKENS = (EOS, BOS, MASK)
DEFAULT_VOCAB = 4096
TOKENIZER_DIR = CACHE / "tokenizer"
PIECES = (
    r" ?[\p{L}_][\p{L}\p{N}_]*"  # identifiers and words, with at most one leading space
    r"| ?\p{N}{1,3}"  # numbers in groups of up to three digits
    r"| ?[^\s\p{L}\p{N}_]+"  # punctuation runs: `):`, `==`, `"""`
    r"|\r?\n"  # one newline per piece
    r"|[ \t]+"  # indentation and alignment runs
    r"|\s"  # any other whitespace, one character at a time
)


def empty_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PIECES), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    return tok


def corpus_texts(split: str = "train") -> Iterator[str]:
    with (CORPUS_DIR / f"{split}.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)["text"]


def train_tokenizer(texts: Iterator[str], vocab_size: int = DEFAULT_VOCAB) -> Tokenizer:
    tok = empty_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def wrap(tok: Tokenizer, model_max_length: int = 512) -> PreTrainedTokenizerFast:
    """The transformers tokenizer: bos/eos/pad/mask set, no implicit special tokens, exact decoding."""
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=EOS,
        mask_token=MASK,
        add_bos_token=False,
        add_eos_token=False,
        clean_up_tokenization_spaces=False,
        model_max_length=model_max_length,
        padding_side="right",
    )


def save_tokenizer(tok: Tokenizer, folder: Path, model_max_length: int = 512) -> PreTrainedTokenizerFast:
    hf = wrap(tok, model_max_length)
    write_tokenizer_files(hf, folder)
    return hf


def write_tokenizer_files(hf: PreTrainedTokenizerFast, folder: Path) -> None:
    """save_pretrained plus what transformers 5 leaves out but 4.x readers and people look for:
    a `special_tokens_map.json`, `add_bos_token: false`, and the portable class name."""
    folder.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(str(folder))
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.update(tokenizer_class="PreTrainedTokenizerFast", add_bos_token=False, add_eos_token=False)
    for machine_local in ("is_local", "local_files_only"):
        config.pop(machine_local, None)
    write_json_atomic(config_path, config)
    special = {"bos_token": BOS, "eos_token": EOS, "pad_token": EOS, "mask_token": MASK}
    write_json_atomic(folder / "special_tokens_map.json", special)


def load_tokenizer(folder: Path = TOKENIZER_DIR) -> PreTrainedTokenizerFast:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder))


def count_tokens(hf: PreTrainedTokenizerFast) -> dict[str, int]:
    """Tokens per package over train+val, using the fast backend in batches."""
    counts: dict[str, int] = {}
    backend = hf.backend_tokenizer
    for split in ("train", "val"):
        batch: list[tuple[str, str]] = []
        with (CORPUS_DIR / f"{split}.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                batch.append((record["package"], record["text"]))
                if len(batch) == 256:
                    _add_counts(backend, batch, counts)
                    batch = []
        _add_counts(backend, batch, counts)
    return counts


def _add_counts(backend: Tokenizer, batch: list[tuple[str, str]], counts: dict[str, int]) -> None:
    if not batch:
        return
    encodings = backend.encode_batch([text for _, text in batch], add_special_tokens=False)
    for (package, _), enc in zip(batch, encodings):
        counts[package] = counts.get(package, 0) + len(enc.ids)


def record_token_counts(counts: dict[str, int], vocab_size: int) -> float:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    for package in manifest["packages"]:
        package["tokens"] = counts.get(package["name"], 0)
    totals = manifest["totals"]
    totals["tokens"] = sum(counts.values())
    totals["bytes_per_token"] = round(totals["bytes"] / max(1, totals["tokens"]), 3)
    totals["tokenizer_vocab_size"] = vocab_size
    write_json_atomic(MANIFEST, manifest)
    return totals["bytes_per_token"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train the default model's byte-level BPE tokenizer")
    parser.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB)
    parser.add_argument("--out", type=Path, default=TOKENIZER_DIR)
    args = parser.parse_args(argv)
    tok = train_tokenizer(corpus_texts("train"), args.vocab_size)
    hf = save_tokenizer(tok, args.out)
    bpt = record_token_counts(count_tokens(hf), len(hf))
    print(f"vocab {len(hf)}; {bpt} bytes/token; saved to {args.out}")


if __name__ == "__main__":
    main()
