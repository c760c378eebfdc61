"""The language server with its model behind a `dcomplete engine` that goes away and comes back while
the editor is connected: completions answer empty (never an error), the failure is shown once, and the
server reconnects by itself once the engine answers again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlparse

import pytest
from lsp_harness import start_server, wait_until
from lsprotocol import types

from lsp_server.inference import RECONNECT_SECONDS
from tests.support.engine_process import EngineProcess

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = "file:///work/remote.py"
TEXT = "value = 1  # note: \nprint(value)\n"
CURSOR = (0, len("value = 1  # note: "))
FAST = {"steps": 0, "maxTokens": 8}
SLOW = {"steps": 4096, "maxTokens": 64}


def messages(session, kind: types.MessageType) -> list[str]:
    return [m.message for m in session.client.messages if m.type == kind]


async def test_the_engine_going_away_and_coming_back(tiny_dream: Path, tmp_path: Path) -> None:
    engine = EngineProcess(["--model", str(tiny_dream)]).start()
    port = urlparse(engine.url).port
    try:
        async with start_server(tmp_path, {"engineUrl": engine.url, **FAST}) as session:
            await session.open(URI, TEXT)
            first = await asyncio.wait_for(session.inline(URI, *CURSOR), 60)
            assert first.items
            await wait_until(lambda: session.recorded.statuses)
            assert session.recorded.statuses[-1]["engine"] == "connected"

            session.configure(**SLOW)
            running = asyncio.ensure_future(session.inline(URI, *CURSOR))
            await asyncio.sleep(1.0)
            engine.process.kill()  # mid-request, as a crash or a reboot would
            assert not (await asyncio.wait_for(running, 30)).items
            await wait_until(lambda: messages(session, types.MessageType.Error))
            session.configure(**FAST)
            for _ in range(3):  # still down: empty answers, and no second message
                assert not (await asyncio.wait_for(session.inline(URI, *CURSOR), 30)).items
            (shown,) = messages(session, types.MessageType.Error)
            assert engine.url in shown and "not reachable" in shown
            assert session.recorded.statuses[-1]["engine"] == "unreachable"

            engine = EngineProcess(["--model", str(tiny_dream), "--port", str(port)]).start()
            await asyncio.sleep(RECONNECT_SECONDS)
            back = await asyncio.wait_for(session.inline(URI, *CURSOR), 60)
            assert back.items
            (info,) = [m for m in messages(session, types.MessageType.Info) if "answers again" in m]
            assert engine.url in info
            assert session.recorded.statuses[-1]["engine"] == "connected"
    finally:
        engine.stop()


async def test_an_unreachable_engine_at_start_is_one_message_not_a_crash(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9"  # discard port: nothing listens there
    async with start_server(tmp_path, {"engineUrl": url, **FAST}) as session:
        await session.open(URI, TEXT)
        assert not (await asyncio.wait_for(session.inline(URI, *CURSOR), 30)).items
        await wait_until(lambda: messages(session, types.MessageType.Error))
        (shown,) = messages(session, types.MessageType.Error)
        assert url in shown
