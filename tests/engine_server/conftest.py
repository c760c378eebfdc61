"""tabby-agent from npm for its end-to-end test, installed in the background from collection on (about 45 s
on a fresh machine, cached afterwards), so the install overlaps the other engine server tests."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from tests.support import tabby_agent
from tests.support.run_last import run_last

AGENT_MODULE = "test_tabby_agent.py"
_install: Future[Path] | None = None


def _start() -> Future[Path]:
    future: Future[Path] = Future()

    def run() -> None:
        try:
            future.set_result(tabby_agent.install())
        except BaseException as error:
            future.set_exception(error)

    threading.Thread(target=run, name="tabby-agent-install", daemon=True).start()
    return future


def pytest_collection_modifyitems(session: Any, config: Any, items: list[pytest.Item]) -> None:
    """When the agent's test is selected, start its install now and run it after the other tests here."""
    global _install
    if run_last(items, config, AGENT_MODULE):
        _install = _start()


@pytest.fixture(scope="session")
def tabby_agent_script() -> Path:
    """The installed agent's entry script (the install runs once per machine, and once per suite)."""
    return (_install or _start()).result(timeout=tabby_agent.INSTALL_TIMEOUT_S)
