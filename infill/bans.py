"""Re-decoding a left-to-right span from its first offending token, with what it wrote there banned.

Re-masking a span's tail and decoding it again greedily writes the same tail (the anchored family's base is
causal and deterministic), so for an engine that writes left to right a result that breaks the parse is
revised differently: the tokens before the offending one stay (as fixed text of the retry canvas), the
span restarts there, and its first token may not be what was written before (`BanLead`). An error at the
end of a result (a block opener with no body, a missing closer) bans the token that ended it, so the
model writes on. `BanPlan` finds the offending token from the parse check's error offset.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from infill.languages import LanguageSpec
from infill.leads import SpanLead, vocab_texts
from infill.postprocess import Shaped, decode, token_offsets


@functools.lru_cache(maxsize=4)
def _all_ids(tokenizer: Any) -> frozenset[int]:
    return frozenset(range(len(vocab_texts(tokenizer))))


class BanLead:
    """`engine.types.Lead` of a retried span that restarts after `before` (the tokens kept from the last
    attempt): its first token may be anything but `banned`, within what the span's own lead (`base`, the
    healed boundary) still requires. `text` is what remains of the base lead, which is all a remote engine
    receives of it (a remote retry therefore runs without the ban)."""

    def __init__(self, base: SpanLead | None, before: Sequence[int], banned: frozenset[int], tokenizer: Any) -> None:
        self.base, self.before, self.banned, self.tokenizer = base, tuple(before), banned, tokenizer
        done = "".join(vocab_texts(tokenizer)[t] for t in self.before)
        self.text = base.text[len(done) :] if base is not None and len(done) < len(base.text) else ""

    def allowed(self, written: Sequence[int]) -> frozenset[int] | None:
        required = self.base.allowed((*self.before, *written)) if self.base is not None else None
        if written:
            return required
        return (required if required is not None else _all_ids(self.tokenizer)) - self.banned

    def __repr__(self) -> str:
        return f"BanLead(after {len(self.before)} tokens, banned {sorted(self.banned)})"


class BodyLead:
    """`engine.types.Lead` of a retried span whose last attempt ended right after a line that opens a
    block (`for x in xs:`, then the end of the span): `ban` (its `BanLead`) decides the first token, and
    after it no end token may come while the text so far (`before`, the kept tokens' text, then what the
    retry writes) ends with a line that opens a block, its own or one it wrote since. Banning the end once
    only moved it a token later (a line break, then the end): on HumanEval's multi-line gaps the default
    left 19 of 100 empty this way where the base alone left 9. The lead never finishes (it allows every id
    where the end may come), so the span writes one verified token a step: a lead that finished once the
    text had a body let the next step's drafts past it, and a rejected draft put the end back after the
    header. Only for spans without stop tokens (a stop counts only after the lead)."""

    def __init__(self, ban: BanLead, before: str, spec: LanguageSpec, ends: frozenset[int], tokenizer: Any) -> None:
        self.ban, self.before, self.spec, self.text = ban, before, spec, ban.text
        self.vocab = vocab_texts(tokenizer)
        self._all = _all_ids(tokenizer)
        self._open = self._all - ends

    def allowed(self, written: Sequence[int]) -> frozenset[int] | None:
        required = self.ban.allowed(written)
        if not written or required is not None:
            return required
        text = self.before + "".join(self.vocab[t] if t < len(self.vocab) else "" for t in written)
        return self._open if ends_with_header(text, self.spec) else self._all

    def __repr__(self) -> str:
        return f"BodyLead({self.ban!r})"


def ends_with_header(text: str, spec: LanguageSpec) -> bool:
    """Whether the last non-blank line of `text` opens a block (`LanguageSpec.opens_block`)."""
    stripped = text.rstrip()
    return bool(stripped) and spec.opens_block(stripped[stripped.rfind("\n") + 1 :])


def blamed_offset(text: str, where: int, spec: LanguageSpec) -> int:
    """Where a result's first parse error (at `where` in `text`) is blamed for its retry: at the end when
    the result's last line opens a block, since the body is what is missing whatever the grammar points
    at (tree-sitter puts the error of a Rust `if low < high {` whose `}` then closes the function at the
    `if`, and banning the `if` is no repair), else where the check found it."""
    return len(text) if ends_with_header(text, spec) else where


def retry_lead(base: SpanLead | None, before: Sequence[int], banned: frozenset[int], stops: frozenset[int],
               special: Any, spec: LanguageSpec, tokenizer: Any) -> BanLead | BodyLead:
    """The lead of a span retried after `before` with `banned` first tokens: a `BodyLead` when the end was
    banned right after a line that opens a block (and the span has no stop tokens), else a `BanLead`."""
    ban = BanLead(base, before, banned, tokenizer)
    ends = frozenset({special.eos_id, special.pad_id})
    written = decode(tokenizer, list(before))
    if banned & ends and not stops and ends_with_header(written, spec):
        return BodyLead(ban, written, spec, ends, tokenizer)
    return ban


def moved_spans(positions: list[tuple[int, int]], retried: dict[int, int],
                spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each slot's (start, end) after a ban retry whose spans (one per retried slot, in order) started
    `retried[slot]` tokens into the slot and may have grown: a grown span moves every slot after it."""
    out, shift, grown = [], 0, iter(spans)
    for i, (start, end) in enumerate(positions):
        if i not in retried:
            out.append((start + shift, end + shift))
            continue
        span_start, span_end = next(grown)
        out.append((start + shift, span_end))
        shift += (span_end - span_start) - (end - start - retried[i])
    return out


@dataclass(frozen=True)
class BanPlan:
    """Where span tokens are cut for a retry (`index`: tokens kept before it) and what is banned there."""

    index: int
    banned: frozenset[int]


def offending_index(tokenizer: Any, kept: list[int], shaped: Shaped, where: int) -> int:
    """The index of the token that wrote `shaped.text[where]` (the first error in the result), or
    `len(kept)` for an error at the very end of the result (the token that ended it is the culprit)."""
    if where >= len(shaped.text):
        end = shaped.raw_offset(len(shaped.text))
        offsets = token_offsets(tokenizer, kept)
        return bisect.bisect_left(offsets, end) if end < len(shaped.raw) else len(kept)
    at = shaped.raw_offset(where)
    offsets = token_offsets(tokenizer, kept)
    return max(bisect.bisect_right(offsets, at) - 1, 0)


def plan_ban(span: Sequence[int], kept: list[int], index: int, lead_tokens: int, end_ids: frozenset[int],
             earlier: dict[tuple[int, ...], frozenset[int]]) -> BanPlan | None:
    """The retry of a span whose offending token is at `index` (a position of the written span `span`,
    of which `kept` are the tokens before its end), or None when there is nothing to revise: the
    offending token is inside the healed lead, or the span had no room left after its text. `earlier`
    holds what previous retries banned after the same kept tokens; an end token bans every end token."""
    if index < lead_tokens or index >= len(span):
        return None
    token = span[index]
    banned = end_ids if token in end_ids else frozenset({token})
    banned |= earlier.get(tuple(kept[:index]), frozenset())
    return BanPlan(index, banned)


def lead_token_count(tokenizer: Any, kept: list[int], lead: str) -> int:
    """How many of the span's first tokens write its lead (they are not the model's to revise)."""
    if not lead:
        return 0
    offsets = token_offsets(tokenizer, kept)
    return bisect.bisect_left(offsets, len(lead))
