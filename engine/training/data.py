"""Training examples for the masked-diffusion objective: packed plain sequences and infill-shaped canvases.

Every example is `length` token ids starting with BOS, plus a boolean `maskable` row saying which positions
the objective may mask (never position 0). Plain examples are windows of the corpus packed end to end with
EOS between files; every position after BOS is maskable. Infill examples are
`[bos] + prefix + middle + eos*k + suffix` (right-padded with EOS), where only middle + the k EOS are
maskable: the model learns to fill a gap and to end it with EOS when the gap is larger than the code.
Half the infill examples carry no EOS run at all: with k uniform over 0..32 the model learned that EOS is
the likeliest token anywhere in a gap and filled most gaps with nothing.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from engine.training.infill_cuts import choose_cut, line_starts, node_spans

MAX_EOS_PAD = 32
NO_EOS_FRACTION = 0.5
MAX_MIDDLE_TOKENS = 128


@dataclass(frozen=True)
class SpecialIds:
    bos: int
    eos: int
    mask: int


@dataclass(frozen=True)
class Example:
    ids: list[int]
    maskable: list[bool]
    kind: str


class TokenizedCorpus:
    """The texts of one split and their concatenated token stream (EOS after every file)."""

    def __init__(self, texts: list[str], tokenizer, special: SpecialIds, cache: Path | None = None) -> None:
        self.texts = texts
        self.tokenizer = tokenizer
        self.special = special
        self.stream = self._load_stream(cache) if cache is not None and cache.exists() else self._tokenize()
        if cache is not None and not cache.exists():
            tmp = cache.with_name(cache.name + ".tmp.npy")
            np.save(tmp, self.stream)
            tmp.replace(cache)
        sizes = np.asarray([len(t) for t in texts], dtype=np.float64)
        self.file_weights = (sizes / sizes.sum()).tolist() if len(texts) else []
        self._spans: dict[int, list[tuple[int, int]]] = {}
        self._starts: dict[int, list[int]] = {}

    def _tokenize(self) -> np.ndarray:
        encodings = self.tokenizer.backend_tokenizer.encode_batch(self.texts, add_special_tokens=False)
        pieces = []
        for enc in encodings:
            pieces.append(np.asarray(enc.ids, dtype=np.int32))
            pieces.append(np.asarray([self.special.eos], dtype=np.int32))
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)

    @staticmethod
    def _load_stream(cache: Path) -> np.ndarray:
        return np.load(cache)

    @classmethod
    def from_jsonl(cls, path: Path, tokenizer, special: SpecialIds) -> TokenizedCorpus:
        """Texts of a split; the token stream is cached next to it, keyed by corpus and tokenizer content."""
        with path.open(encoding="utf-8") as handle:
            texts = [json.loads(line)["text"] for line in handle]
        vocab = tokenizer.backend_tokenizer.to_str().encode("utf-8")
        key = hashlib.sha256(path.read_bytes() + vocab).hexdigest()[:16]
        return cls(texts, tokenizer, special, cache=path.with_name(f"{path.stem}.{key}.tokens.npy"))

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.backend_tokenizer.encode(text, add_special_tokens=False).ids if text else []

    def starts(self, index: int) -> list[int]:
        if index not in self._starts:
            self._starts[index] = line_starts(self.texts[index])
        return self._starts[index]

    def spans(self, index: int) -> list[tuple[int, int]]:
        if index not in self._spans:
            self._spans[index] = node_spans(self.texts[index])
        return self._spans[index]


def plain_example(corpus: TokenizedCorpus, rng: random.Random, length: int) -> Example:
    body = length - 1
    start = rng.randrange(0, max(1, len(corpus.stream) - body))
    window = corpus.stream[start : start + body].tolist()
    window += [corpus.special.eos] * (body - len(window))
    return Example([corpus.special.bos, *window], [False] + [True] * body, "plain")


def fit_context(
    prefix: list[int], suffix: list[int], room: int, rng: random.Random
) -> tuple[list[int], list[int]]:
    """Trim prefix on the left and suffix on the right so that together they fit in `room` tokens."""
    if len(prefix) + len(suffix) <= room:
        return prefix, suffix
    prefix_room = max(room - len(suffix), int(room * rng.uniform(0.4, 0.9)))
    prefix_room = min(prefix_room, len(prefix), room)
    suffix_room = room - prefix_room
    return prefix[len(prefix) - prefix_room :], suffix[:suffix_room]


def infill_example(corpus: TokenizedCorpus, rng: random.Random, length: int) -> Example | None:
    """An infill canvas from a random file, or None when the drawn cut does not fit."""
    special = corpus.special
    index = rng.choices(range(len(corpus.texts)), corpus.file_weights)[0]
    text = corpus.texts[index]
    span_chars = length * 3
    lo = rng.randrange(0, max(1, len(text) - span_chars))
    window = (lo, min(len(text), lo + span_chars))
    cut = choose_cut(text, rng, window, lambda: corpus.spans(index), corpus.starts(index))
    middle = corpus.encode(cut.middle)
    if len(middle) > MAX_MIDDLE_TOKENS:
        return None
    eos_run = 0 if middle and rng.random() < NO_EOS_FRACTION else rng.randint(1, MAX_EOS_PAD)
    room = length - 1 - len(middle) - eos_run
    if room < 0:
        return None
    prefix = corpus.encode(cut.prefix[-span_chars * 2 :])
    suffix = corpus.encode(cut.suffix[: span_chars * 2])
    prefix, suffix = fit_context(prefix, suffix, room, rng)
    gap = [*middle, *[special.eos] * eos_run]
    ids = [special.bos, *prefix, *gap, *suffix]
    maskable = [False] * (1 + len(prefix)) + [True] * len(gap) + [False] * len(suffix)
    pad = length - len(ids)
    return Example(ids + [special.eos] * pad, maskable + [False] * pad, cut.kind)


def make_batch(
    corpus: TokenizedCorpus, rng: random.Random, batch_size: int, length: int, infill_fraction: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids [B, T] long, maskable [B, T] bool); the first round(B * infill_fraction) rows are infill."""
    examples: list[Example] = []
    n_infill = round(batch_size * infill_fraction)
    while len(examples) < n_infill:
        example = infill_example(corpus, rng, length)
        if example is not None:
            examples.append(example)
    while len(examples) < batch_size:
        examples.append(plain_example(corpus, rng, length))
    ids = torch.tensor([e.ids for e in examples], dtype=torch.long)
    maskable = torch.tensor([e.maskable for e in examples], dtype=torch.bool)
    return ids, maskable
