"""The compiled VS Code extension, built once per test session for the unit tests, the packaging test
and the end-to-end test in code-server."""

from __future__ import annotations

from pathlib import Path

import pytest
from vscode_build import build_extension


@pytest.fixture(scope="session")
def built_extension(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_extension(tmp_path_factory.mktemp("vscode") / "extension")
