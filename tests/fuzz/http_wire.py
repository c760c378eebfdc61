"""A raw HTTP/1.1 client for the engine server fuzzer: it sends any bytes at all (broken request lines,
wrong Content-Length, bad chunking: what httpx refuses to send) on a connection of their own, and reads
the one response that comes back.

The body is written from a second thread while the answer is read, so a server that answers 413 before
reading a large body is heard instead of being taken for a reset connection.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlparse

MAX_ANSWER = 64 * 1024 * 1024


@dataclass
class Answer:
    """A parsed response; `status` 0 when none came (then `failure` says why)."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    seconds: float = 0.0
    failure: str = ""


def address(url: str) -> tuple[str, int]:
    parts = urlparse(url)
    assert parts.hostname is not None and parts.port is not None, url
    return parts.hostname, parts.port


def request_bytes(method: str, path: str, host: str, headers: dict[str, str] | list[tuple[str, str]],
                  body: bytes, content_length: bool = True) -> bytes:
    """An HTTP/1.1 request that closes its connection; Content-Length is added unless `headers` has one
    (or `content_length` is False)."""
    pairs = list(headers.items()) if isinstance(headers, dict) else list(headers)
    names = {name.lower() for name, _ in pairs}
    if content_length and "content-length" not in names and "transfer-encoding" not in names:
        pairs.append(("Content-Length", str(len(body))))
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in pairs]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + body


def exchange(where: tuple[str, int], data: bytes, timeout: float) -> Answer:
    """Send `data`, then read until the server closes the connection."""
    started = time.monotonic()
    try:
        sock = socket.create_connection(where, timeout=timeout)
    except OSError as error:
        return Answer(failure=f"connect: {error}", seconds=time.monotonic() - started)
    with sock:
        writer = threading.Thread(target=_write, args=(sock, data), daemon=True)
        writer.start()
        received = bytearray()
        failure = ""
        deadline = started + timeout
        try:
            while len(received) < MAX_ANSWER:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                received += chunk
        except TimeoutError:
            failure = f"no complete answer within {timeout:.0f} s"
        except OSError as error:
            failure = f"read: {error}"
        writer.join(timeout=1.0)
    answer = parse(bytes(received))
    answer.seconds = time.monotonic() - started
    if answer.status == 0:
        answer.failure = failure or answer.failure or "the connection closed without an answer"
    return answer


def _write(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)  # no half-close after it: uvicorn takes that for a client that went away
    except OSError:
        pass  # the server answered (413, 400) and closed before it read everything: the answer tells


def parse(raw: bytes) -> Answer:
    """The final response in `raw` (interim 1xx responses, such as 100 Continue, are skipped)."""
    while True:
        head, separator, rest = raw.partition(b"\r\n\r\n")
        if not separator:
            return Answer(failure=f"incomplete response head: {raw[:80]!r}")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            return Answer(failure=f"bad status line: {lines[0][:80]!r}")
        if not parts[1].startswith("1"):
            break
        raw = rest
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = rest
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _dechunk(rest)
    elif "content-length" in headers and headers["content-length"].isdigit():
        body = rest[: int(headers["content-length"])]
    return Answer(int(parts[1]), headers, body)


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    at = 0
    while True:
        end = data.find(b"\r\n", at)
        if end < 0:
            return bytes(out)
        size = int(data[at:end].split(b";")[0] or b"0", 16)
        if size == 0:
            return bytes(out)
        out += data[end + 2 : end + 2 + size]
        at = end + 2 + size + 2
