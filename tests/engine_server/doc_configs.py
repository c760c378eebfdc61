"""The configuration blocks of docs/editors.md ("Other clients") and docs/engine-server.md, for the tests that
replay each client:
what the documentation tells a user to write is what the tests point the client at."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).parents[2] / "docs" / "editors.md"
URL = "http://127.0.0.1:8765"  # `dcomplete engine`'s default address, which the blocks name


def block(heading: str, index: int = 0, page: Path = PAGE) -> str:
    """The `index`-th fenced block under `page`'s heading `heading` (any level), up to the next heading of
    the same or a higher level; `#` lines inside fenced blocks are not headings."""
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    fenced, level, section = False, 0, []
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        heading_match = None if fenced else re.match(r"(#+) (.*)\n?$", line)
        if level and heading_match and len(heading_match.group(1)) <= level:
            break
        if level:
            section.append(line)
        elif heading_match and heading_match.group(2) == heading:
            level = len(heading_match.group(1))
    assert level, f"{page} has no heading {heading!r}"
    return re.findall(r"```\w*\n(.*?)```", "".join(section), re.DOTALL)[index]


def at(url: str, engine_url: str) -> str:
    """`url` from a block, moved from the default address to the engine under test."""
    assert url.startswith(URL), f"{url} is not on dcomplete engine's default address {URL}"
    return engine_url + url[len(URL):]
