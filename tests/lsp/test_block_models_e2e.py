"""DiffusionGemma behind the language server over stdio (in the server, and behind a `dcomplete engine` the
server reaches over HTTP): an inline completion at a cursor is served by transformers' own generate through
the same `Engine.infill` contract as every other family. The random model's text goes into a comment,
where any single line keeps the file parsing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import tree_sitter
import tree_sitter_python
from lsp_harness import ENGINE_MODES, model_settings, start_server, wait_until
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="function")

URI = "file:///work/greet.py"
TEXT = "def greet(name):\n    # say hello to\n    return name\n"


@pytest.mark.slow
@pytest.mark.parametrize("mode", ENGINE_MODES)
async def test_inline_completion_from_diffusion_gemma(mode: str, tiny_block, tmp_path: Path) -> None:
    with model_settings(mode, tiny_block("diffusion_gemma")) as model:
        async with start_server(tmp_path, {**model, "maxTokens": 8}) as session:
            await session.open(URI, TEXT)
            line, character = 1, len("    # say hello to")
            result = await asyncio.wait_for(session.inline(URI, line, character), 120)
            assert isinstance(result, types.InlineCompletionList) and result.items
            parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
            for item in result.items:
                assert item.range == types.Range(types.Position(line, character), types.Position(line, character))
                insert = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
                assert insert and "\n" not in insert
                lines = TEXT.split("\n")
                lines[line] = lines[line][:character] + insert + lines[line][character:]
                assert not parser.parse("\n".join(lines).encode()).root_node.has_error
            await wait_until(lambda: any("lastLatencyMs" in s for s in session.recorded.statuses))
