"""Token boundaries at the edges of a gap, for models that write left to right (the anchored family).

A prefix tokenized on its own ends at boundaries the tokenizer never produces inside real text: "x = "
ends with a lone space that normally belongs to the next word, "    " at the start of a line is one
token where the whole line has "\\n   " + " return". A causal model reading such a prefix is off its
training distribution at exactly the place it writes next (measured: 1.7% pass@1 on HumanEval single-line
when the prompt ends after the line break, 31.7% when it stops before it). So the canvas backs the prefix
off to a boundary the tokenizer produces, and the text taken off becomes a constraint on the first tokens
the model writes (`TextLead`): back to before the trailing line break(s) and indentation when the spot
starts a line, else back by the prefix's last token ("token healing"). Post-processing removes the lead
from what was written.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol


@functools.lru_cache(maxsize=4)
def vocab_texts(tokenizer: Any) -> tuple[str, ...]:
    """The text of every id decoded alone ("" for special tokens), once per tokenizer."""
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))], clean_up_tokenization_spaces=False)
    return tuple("" if i in special else text for i, text in enumerate(texts))


def lead_text(before: str, tokenizer: Any) -> str:
    """The end of `before` (the fixed text just ahead of a gap) to move into the gap."""
    if not before:
        return ""
    # the trailing whitespace from its first line break on (what `\n\s*$` matches, without the regex's
    # rescan of the rest of the text from every line break: quadratic on a text of blank lines)
    trailing = before[len(before.rstrip()) :]
    if (first_break := trailing.find("\n")) >= 0:
        return trailing[first_break:]
    ids = tokenizer.encode(before, add_special_tokens=False)
    if not ids:
        return ""
    last = tokenizer.decode(ids[-1:], clean_up_tokenization_spaces=False)
    return last if before.endswith(last) and "\ufffd" not in last else ""


class SpanLead(Protocol):
    """What infill builds for `engine.types.Lead` (`TextLead`, `line_shape.ShapeLead`, the retries' leads)."""

    @property
    def text(self) -> str: ...

    def allowed(self, written: Sequence[int]) -> frozenset[int] | None: ...


class TextLead:
    """`engine.types.Lead` for a text: after the tokens written so far, the ids whose text continues it
    (either extends past its end or is a prefix of what remains); None once it is written."""

    def __init__(self, text: str, tokenizer: Any) -> None:
        self.text = text
        self.vocab = vocab_texts(tokenizer)

    def allowed(self, written: Sequence[int]) -> frozenset[int] | None:
        done = "".join(self.vocab[t] if t < len(self.vocab) else "" for t in written)
        if len(done) >= len(self.text):
            return None
        return _continuations(self.vocab, self.text[len(done) :])

    def __repr__(self) -> str:
        return f"TextLead({self.text!r})"


@functools.lru_cache(maxsize=256)
def _continuations(vocab: tuple[str, ...], rest: str) -> frozenset[int]:
    return frozenset(i for i, s in enumerate(vocab) if s and (s.startswith(rest) or rest.startswith(s)))


class TextReference:
    """`engine.types.Reference` for a text: the text a region holds now, which the engine compares what it
    writes there with; at the first id that does not spell it, the engine notes how much more likely its
    token was than the best one that keeps the text (`engine.types.Span.margin`)."""

    def __init__(self, text: str, tokenizer: Any) -> None:
        self.text = text
        self.vocab = vocab_texts(tokenizer)

    def _rest(self, written: Sequence[int]) -> str | None:
        """What of the text remains after `written`; None when `written` no longer spells its start."""
        done = "".join(self.vocab[t] if t < len(self.vocab) else "" for t in written)
        return self.text[len(done) :] if self.text.startswith(done) else None

    def follows(self, written: Sequence[int], token: int) -> bool:
        rest = self._rest(written)
        if rest is None:
            return False
        piece = self.vocab[token] if token < len(self.vocab) else ""
        return rest.startswith(piece) and (piece != "" or rest == "")

    def alternatives(self, written: Sequence[int]) -> frozenset[int]:
        rest = self._rest(written)
        return _prefixes(self.vocab, rest) if rest else frozenset()

    def decided(self, written: Sequence[int]) -> bool:
        """Whether `written` has left the text, or spelled all of it: the span's verdict on the text is in."""
        rest = self._rest(written)
        return rest is None or rest == ""

    def __repr__(self) -> str:
        return f"TextReference({self.text!r})"


@functools.lru_cache(maxsize=64)
def _prefixes(vocab: tuple[str, ...], rest: str) -> frozenset[int]:
    """The ids whose text is a non-empty prefix of `rest` (the first few characters bound the scan)."""
    head = rest[:1]
    return frozenset(i for i, s in enumerate(vocab) if s and s[0] == head and rest.startswith(s))
