"""`dcomplete engine` as a real subprocess on loopback, for tests and benchmarks.

    with EngineProcess(["--model", str(folder)]) as engine:
        httpx.get(engine.url + "/health")

Starts the CLI on a free port (`--port 0`), waits for the line that names its URL, and stops it (SIGTERM,
then SIGKILL) on exit. `stop()` may be called early, e.g. to test a client whose engine went away.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Sequence

_URL = re.compile(r"on (http://\S+?);")


class EngineProcess:
    def __init__(self, args: Sequence[str], threads: int = 1, timeout: float = 120.0) -> None:
        self.args = ["--port", "0", *args]
        self.env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        self.timeout = timeout
        self.url = ""
        self.lines: list[str] = []
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> EngineProcess:
        self.process = subprocess.Popen([sys.executable, "-m", "cli", "engine", *self.args],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, env=self.env)
        found = threading.Event()
        threading.Thread(target=self._read, args=(found,), daemon=True).start()
        if not found.wait(self.timeout) or not self.url:
            self.stop()
            raise RuntimeError(f"dcomplete engine did not start: {''.join(self.lines)[-2000:]}")
        return self

    def _read(self, found: threading.Event) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            match = _URL.search(line)
            if match and not self.url:
                self.url = match.group(1)
                found.set()
        found.set()  # the process ended

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def __enter__(self) -> EngineProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
