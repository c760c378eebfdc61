"""A raw JSON-RPC connection to a real `dcomplete serve` over stdio.

It writes any bytes at all (invalid JSON, broken headers, batch arrays: what a typed client refuses to
send), reads the server's messages on a thread of its own, answers the server's own requests the way a
cautious editor would, and reads the process's resident memory from /proc.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def server_command() -> list[str]:
    """The `dcomplete` script next to this Python (the installed console entry), else `-m lsp_server`."""
    script = Path(sys.executable).parent / "dcomplete"
    if script.is_file():
        return [str(script), "serve"]
    return [sys.executable, "-m", "lsp_server"]


def rss_mb(pid: int) -> float:
    """Resident set size of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS in /proc/{pid}/status")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: Any) -> bytes:
    return json.dumps(message).encode("utf-8")


class ServerProcess:
    def __init__(self, env: dict[str, str], log_file: Path | None = None) -> None:
        command = server_command()
        if log_file is not None:
            command += ["--log-file", str(log_file)]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(REPO), **env},
            cwd=str(REPO),
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.server_requests = 0
        self.unreadable = 0
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        with self._write_lock:
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame(encode(message)))

    def _read_loop(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if length is None:
                self.unreadable += 1
                continue
            try:
                message = json.loads(stream.read(length))
            except ValueError:
                self.unreadable += 1
                continue
            if "method" in message and "id" in message:
                self._answer(message)
            self.messages.put(message)

    def _answer(self, request: dict[str, Any]) -> None:
        """workspace/applyEdit is declined (the fuzzer's documents change only by its own edits)."""
        self.server_requests += 1
        method = request["method"]
        result: Any = None
        if method == "workspace/applyEdit":
            result = {"applied": False, "failureReason": "the fuzz client applies no edits"}
        elif method == "workspace/configuration":
            result = [None for _ in request.get("params", {}).get("items", [])]
        try:
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})
        except OSError:
            pass

    def rss_mb(self) -> float:
        return rss_mb(self.pid)

    def close(self, timeout: float = 20.0) -> int | None:
        """shutdown + exit; the exit status (None when it had to be killed)."""
        try:
            self.send({"jsonrpc": "2.0", "id": "fuzz-shutdown", "method": "shutdown"})
            self.send({"jsonrpc": "2.0", "method": "exit"})
            return self.process.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
            return None
