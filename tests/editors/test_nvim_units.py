"""The plugin's pure Lua helpers (text pieces, positions, option checking) in a real headless Neovim."""

from __future__ import annotations

import subprocess
from pathlib import Path

from nvim_session import PLUGIN_DIR, find_nvim

SCRIPT = Path(__file__).with_name("nvim_units.lua")


def test_lua_units() -> None:
    result = subprocess.run(
        [find_nvim(), "--headless", "--clean", "-l", str(SCRIPT), str(PLUGIN_DIR)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "0 failed" in output and output.count("\nok ") + output.startswith("ok ") >= 7, output


def test_default_filetypes_are_the_languages_the_server_completes() -> None:
    import re

    from infill.languages import editor_language_ids

    config = (PLUGIN_DIR / "lua" / "dcomplete" / "config.lua").read_text()
    block = config.split("M.LANGUAGES = {", 1)[1].split("}", 1)[0]
    assert re.findall(r"'([^']+)'", block) == editor_language_ids()
