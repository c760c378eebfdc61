"""The configuration blocks of the README's "Editor plugins" section, for the tests that replay each client:
what the README tells a user to write is what the tests point the client at."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).parents[2] / "README.md"
URL = "http://127.0.0.1:8765"  # `dcomplete engine`'s default address, which the blocks name


def block(heading: str, index: int = 0) -> str:
    """The `index`-th fenced block under the README heading `#### {heading}`."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n#### {heading}\n")
    end = min((i for i in (text.find(f"\n{h} ", start + 1) for h in ("####", "###", "##")) if i > 0), default=len(text))
    return re.findall(r"```\w*\n(.*?)```", text[start:end], re.DOTALL)[index]


def at(url: str, engine_url: str) -> str:
    """`url` from a block, moved from the default address to the engine under test."""
    assert url.startswith(URL), f"{url} is not on dcomplete engine's default address {URL}"
    return engine_url + url[len(URL):]
