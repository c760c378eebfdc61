"""Code from other files that a client sends along: llama.cpp's `input_extra`, Tabby's declarations and
snippets, the `extra` field of the OpenAI-style and native endpoints. It goes through the repository
context's formatting (`infill.context`): the chunks that fit the budget, each under a comment naming its
file, in a fixed order at the top of the canvas, whose header the window planner never crops. So the same
chunks give the same first tokens from one request to the next, and a slot's document cache keeps them
(what llama.vim's warm-up requests are for).

A client's chunk is cut into pieces of `PIECE_LINES` lines before the budget picks, so a long one (llama.vim
sends 64 lines) keeps the pieces that fit instead of being dropped whole. The client lists its chunks least
relevant first: later chunks outrank earlier ones, and a chunk's leading pieces its later ones. A piece's
`line` counts on through the client's chunks of one file, so the header keeps each chunk's pieces together
and in the client's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from infill.context import Chunk, ContextBuilder
from remote.server.bounds import longest_token

SHARE = 3
"""Other files take at most 1/SHARE of the model's context."""
PIECE_LINES = 16
"""About 150 tokens of code: two or three pieces fit the bundled model's share (341 tokens)."""


def client_chunks(given: Sequence[tuple[str, str]], kind: str = "recent", rank: int = 0) -> list[Chunk]:
    """(filename, text) pairs, least relevant first, as pieces ranked from `rank` on (pass the number of
    chunks already ranked to list a more relevant kind after them); blank ones are left out."""
    pieces: list[Chunk] = []
    first_line: dict[str, int] = {}
    for order, (name, text) in enumerate(given, start=rank):
        lines = text.rstrip("\n").split("\n")
        starts = range(0, len(lines), PIECE_LINES)
        at = first_line.get(name, 0)
        first_line[name] = at + len(lines)
        for index, start in enumerate(starts):
            piece = "\n".join(lines[start:start + PIECE_LINES])
            if piece.strip():
                pieces.append(Chunk(name, piece, kind, at + start, order - index / len(starts)))
    return pieces


def extra_header(chunks: Sequence[Chunk], comment_prefix: str, tokenizer: Any, max_length: int) -> str:
    """The header the chunks that fit in `max_length // SHARE` tokens make; only the most relevant pieces
    of `max_length` x the longest token's characters in all are tokenized to find them (`bounds`: SHARE
    times the text that could fit)."""
    if not chunks:
        return ""
    builder = ContextBuilder(None, tokenizer, budget=max_length // SHARE, max_length=max_length)
    return builder.fit(chunks, comment_prefix, max_chars=max_length * longest_token(tokenizer)).header
