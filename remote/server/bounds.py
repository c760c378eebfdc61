"""How much text one request may make the server read, decided before anything parses or tokenizes it: the
text around the cursor or spots is cut to what the model's context can reach (`infill.reach`, whose cut
functions this module passes on to the endpoints), and a lead a ready canvas gives is refused when no tokens
can spell it.
"""

from __future__ import annotations

import functools
from typing import Any

from infill.leads import vocab_texts
from infill.reach import char_budget, cut_around, cut_prompt, longest_token

__all__ = ["LEAD_SEARCH_CHARS", "char_budget", "cut_around", "cut_prompt", "lead_writable", "longest_token"]


LEAD_SEARCH_CHARS = 4
"""A lead (`infill.leads.TextLead`) is searched for a spelling in tokens only up to this many longest
tokens of characters; a longer one must be spelt one character a token (whitespace runs are)."""


@functools.lru_cache(maxsize=4)
def _token_texts(tokenizer: Any) -> tuple[frozenset[str], frozenset[str]]:
    """(the text of every token, every non-empty prefix of one)."""
    texts = frozenset(t for t in vocab_texts(tokenizer) if t)
    return texts, frozenset(t[:k] for t in texts for k in range(1, len(t) + 1))


def lead_writable(lead: str, tokenizer: Any) -> bool:
    """Whether tokens can spell `lead` as a `TextLead` holds them to it: each one a piece of what is left of
    it, or running past its end. A lead that cannot be written leaves a sampling step no token to draw
    (a NaN that would fail every row of the batch)."""
    texts, prefixes = _token_texts(tokenizer)
    if all(c in texts for c in lead):
        return True
    longest = longest_token(tokenizer)
    if len(lead) > LEAD_SEARCH_CHARS * longest:
        return False
    reachable = [True] + [False] * len(lead)
    for at in range(len(lead)):
        if not reachable[at]:
            continue
        if len(lead) - at <= longest and lead[at:] in prefixes:
            return True
        for size in range(1, min(longest, len(lead) - at) + 1):
            if lead[at : at + size] in texts:
                reachable[at + size] = True
    return reachable[-1]
