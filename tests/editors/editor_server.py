"""How the editor tests start the real dcomplete language server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def server_command(log_file: Path) -> list[str]:
    """`dcomplete serve` run by this test's own Python (`-m lsp_server`), so it is the checkout under test."""
    return [sys.executable, "-m", "lsp_server", "--log-file", str(log_file), "--verbose"]


def server_settings(model: str) -> dict[str, Any]:
    """Short completions and no server-side debounce: the tests check the plumbing, not the model."""
    return {"model": model, "device": "cpu", "maxTokens": 16, "debounceMs": 0}
