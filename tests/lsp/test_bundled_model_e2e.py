"""The bundled model behind the real server: an edit, then ghost text that keeps the file parsing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import tree_sitter
import tree_sitter_python
from lsp_harness import start_server
from lsprotocol import types

URI = "file:///work/geometry.py"
TEXT = '''import math


def distance(p, q):
    """Euclidean distance between two points."""
    dx = p[0] - q[0]
    dy = p[1] - q[1]
'''


def parses(text: str) -> bool:
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    return not parser.parse(text.encode("utf-8")).root_node.has_error


async def test_completion_after_an_edit_keeps_the_file_parsing(tmp_path: Path) -> None:
    async with start_server(tmp_path, {"model": "default", "debounceMs": 0}) as server:
        await server.open(URI, TEXT)
        await server.edit(URI, (7, 0), (7, 0), "    return ")
        text = TEXT + "    return "
        result = await asyncio.wait_for(server.inline(URI, 7, len("    return ")), 120)
        assert isinstance(result, types.InlineCompletionList) and result.items
        for item in result.items:
            assert item.range == types.Range(types.Position(7, 11), types.Position(7, 11))
            assert isinstance(item.insert_text, str) and item.insert_text.strip()
            assert parses(text + item.insert_text), item.insert_text
