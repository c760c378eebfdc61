"""Tests that need a slow install (code-server, tabby-agent) run at the end of the suite, and their
install starts at collection, so a fresh machine's downloads overlap the rest of the run."""

from __future__ import annotations

from typing import Any


def run_last(items: list[Any], config: Any, module: str) -> bool:
    """Moves the tests of the file named `module` to the end of `items`; whether any will run."""
    chosen = [item for item in items if item.path.name == module]
    if not chosen or config.option.collectonly:
        return False
    items[:] = [item for item in items if item.path.name != module] + chosen
    return True
