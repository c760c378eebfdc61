"""The compiled VS Code extension, built once per test session for the unit tests, the packaging test
and the end-to-end test in code-server; and code-server itself, installed in the background.

On a fresh machine installing Chromium and code-server takes minutes, mostly downloads and native
builds. When the end-to-end test is selected it is moved to the end of the run and the install starts at
collection, so it overlaps the rest of the suite instead of adding to it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from code_server import ensure_system_packages, install_code_server
from editor_server import server_command, server_settings
from nvim_ghost import SOURCE
from nvim_session import NvimSession
from vscode_build import build_extension

from tests.support.run_last import run_last

E2E_MODULE = "test_vscode_e2e.py"


class _Install(threading.Thread):
    def __init__(self) -> None:
        super().__init__(name="code-server-install", daemon=True)
        self.binary: Path | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            ensure_system_packages()
            self.binary = install_code_server()
        except BaseException as error:
            self.error = error

    def result(self) -> Path:
        self.join()
        if self.error is not None:
            raise self.error
        assert self.binary is not None
        return self.binary


_install: _Install | None = None


def pytest_collection_modifyitems(session: Any, config: Any, items: list[pytest.Item]) -> None:
    global _install
    if run_last(items, config, E2E_MODULE):
        _install = _Install()
        _install.start()


@pytest.fixture(scope="session")
def code_server_binary() -> Path:
    """code-server's executable, with Chromium and the other system packages installed."""
    if _install is None:
        ensure_system_packages()
        return install_code_server()
    return _install.result()


@pytest.fixture(scope="session")
def built_extension(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_extension(tmp_path_factory.mktemp("vscode") / "extension")


# -- headless Neovim (test_nvim*.py) ------------------------------------------------------------

@pytest.fixture
def source_file(tmp_path: Path) -> Path:
    path = tmp_path / "sample.py"
    path.write_text(SOURCE, encoding="utf-8")
    return path


@pytest.fixture
def make_session(tiny_dream: Path, tmp_path: Path):
    sessions: list[NvimSession] = []

    def start(renderer: str) -> NvimSession:
        log = tmp_path / "server.log"
        command = ["env", f"XDG_STATE_HOME={tmp_path / 'state'}", *server_command(log)]
        session = NvimSession.start(command, renderer, server_settings(str(tiny_dream)), log)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()
