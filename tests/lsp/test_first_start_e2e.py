"""A first-ever start (an empty cache folder): the real server answers its first suggestion with default
kernels before this machine's kernels are measured or its prepared weights written; both happen between
requests, and once they are done the server answers what a new start that maps the kept files answers. A
changed machine (another thread count, in both files' keys) serves with the default again and measures
again. `DCOMPLETE_CALIBRATION=always` makes the tiny model take the bundled model's path."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import start_server, wait_until
from lsprotocol import types

URI = "file:///work/demo.py"
TEXT = "import os\n\n# the folder we read: \nprint(os.getcwd())\n"
CURSOR = (2, len("# the folder we read: "))


def texts(result: object) -> list[str]:
    assert isinstance(result, types.InlineCompletionList)
    return [item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
            for item in result.items]


def calibrations(statuses: list[dict]) -> list[str]:
    return [s["calibration"] for s in statuses if "calibration" in s]


def kept(cache: Path) -> tuple[list[Path], list[Path]]:
    """The calibration files and the finished prepared-weights files in `cache`."""
    return sorted(cache.glob("calibration/*.json")), sorted(cache.glob("prepared/*.safetensors"))


async def test_a_first_start_answers_before_its_background_work_and_later_starts_use_it(
    tmp_path: Path, tiny_anchored: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("DCOMPLETE_CACHE", str(cache))
    monkeypatch.setenv("DCOMPLETE_CALIBRATION", "always")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    settings = {"model": str(tiny_anchored), "debounceMs": 0, "steps": 0, "maxTokens": 8}
    async with start_server(tmp_path / "first", settings) as first:
        await first.open(URI, TEXT)  # sent while the model loads: no piece of measuring runs before it
        answered = texts(await asyncio.wait_for(first.inline(URI, *CURSOR), 120))
        assert answered
        assert "done" not in calibrations(first.recorded.statuses)
        assert kept(cache) == ([], [])  # neither the calibration nor the prepared weights were waited for
        assert list(cache.glob("gguf/*/config.json"))  # the GGUF's table and tokenizer: read at the load
        await wait_until(lambda: calibrations(first.recorded.statuses)[-2:] == ["measuring", "done"], 300)
        first.configure(**{**settings, "maxTokens": 9})  # not answered from the suggestion it remembers
        measured = texts(await asyncio.wait_for(first.inline(URI, *CURSOR), 120))
    calibration, weights = kept(cache)  # the server waited for the weights' writer before it exited
    assert len(calibration) == 1 and len(weights) == 1 and not list(cache.glob("prepared/*.tmp"))
    written = weights[0].stat().st_mtime_ns

    async with start_server(tmp_path / "second", {**settings, "maxTokens": 9}) as second:
        await second.open(URI, TEXT)
        again = texts(await asyncio.wait_for(second.inline(URI, *CURSOR), 120))
        assert again == measured and measured
        assert calibrations(second.recorded.statuses) == []  # nothing left to measure
    assert kept(cache) == (calibration, weights) and weights[0].stat().st_mtime_ns == written  # mapped, not rebuilt

    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # another machine as the keys see it
    async with start_server(tmp_path / "moved", {**settings, "maxTokens": 9}) as moved:
        await moved.open(URI, TEXT)
        assert texts(await asyncio.wait_for(moved.inline(URI, *CURSOR), 120))
        assert "done" not in calibrations(moved.recorded.statuses)
        await wait_until(lambda: calibrations(moved.recorded.statuses)[-2:] == ["measuring", "done"], 300)
    assert [len(files) for files in kept(cache)] == [2, 2]
