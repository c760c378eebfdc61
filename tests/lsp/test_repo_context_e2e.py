"""Repository context in a real LSP session with the bundled model: a function defined in another file of
the workspace folder, which the editor never opened, is called with its real argument names, with the model
in the server and behind `engineUrl`; with `context` off the same request does not know them.

The names are ones the model cannot guess from the call alone: without context the bundled model writes
`corner_left=0, corner_right=1, width=1, height=1)` here (greedy, so every run).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import ENGINE_MODES, model_settings, start_server
from lsprotocol import types

SHAPES = '''"""Shapes for the drawing demo."""


def scaled_box(corner_left, corner_top, stretch_factor):
    """A box with its top-left corner at (corner_left, corner_top), scaled by stretch_factor."""
    width = 10 * stretch_factor
    return (corner_left, corner_top, corner_left + width, corner_top + width)
'''
CALL = "    box = scaled_box(corner_left="
MAIN = f"from shapes import scaled_box\n\n\ndef draw():\n{CALL}\n"
NAMES = ("corner_top", "stretch_factor")  # in shapes.py only


async def suggestion(server, uri: str) -> str:
    result = await asyncio.wait_for(server.inline(uri, 4, len(CALL), invoked=False), 180)
    assert isinstance(result, types.InlineCompletionList)
    return "".join(str(item.insert_text) for item in result.items)


@pytest.mark.parametrize("mode", ENGINE_MODES)
async def test_a_function_from_another_workspace_file_is_called_with_its_argument_names(tmp_path: Path,
                                                                                        mode: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "shapes.py").write_text(SHAPES)
    (project / "main.py").write_text(MAIN)
    uri = (project / "main.py").as_uri()
    with model_settings(mode, Path("default")) as settings:
        async with start_server(tmp_path, {**settings, "debounceMs": 0}, folders=[project]) as server:
            await server.open(uri, MAIN)
            with_context = await suggestion(server, uri)
            server.configure(context=False)
            without_context = await suggestion(server, uri)
    assert all(name in with_context for name in NAMES), with_context
    assert not any(name in without_context for name in NAMES), without_context
