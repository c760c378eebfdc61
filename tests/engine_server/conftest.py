"""The tiny anchored checkpoint in this process and behind `dcomplete engine` (module-scoped: each test module
starts its own server); tabby-agent from npm for its end-to-end test, installed in the background from
collection on (about 45 s on a fresh machine, cached afterwards), so the install overlaps the other engine
server tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from tests.support import tabby_agent
from tests.support.engine_process import EngineProcess
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


@pytest.fixture(scope="module")
def local(tiny_anchored: Path) -> Engine:
    """The tiny anchored checkpoint in this process, to compare the server's answers with."""
    return Engine.load(tiny_anchored, device="cpu")


@pytest.fixture(scope="module")
def server(tiny_anchored: Path) -> Iterator[EngineProcess]:
    """`dcomplete engine` serving it as a subprocess."""
    with EngineProcess(["--model", str(tiny_anchored)]) as process:
        yield process


@pytest.fixture(scope="session")
def tabby_agent_script() -> Path:
    """The installed agent's entry script (the install runs once per machine, and once per suite)."""
    return (_install or _start()).result(timeout=tabby_agent.INSTALL_TIMEOUT_S)
