"""The server's stdin as pygls reads it, made to survive broken framing.

pygls reads a header line with `readline()`, accepts only `Content-Length: N\\r\\n` at the start of a
line, and reads the body with `read(N)`. Two kinds of bad input then stop the server for good:

- A message without a valid Content-Length header (a truncated or misspelt header): its body, which
  ends without a line break, is read as a header line together with the next message's
  `Content-Length` line, so that message is lost too, and so is every message after it.
- A huge Content-Length (say 10**12): `read(N)` tries to allocate N bytes and the reader dies.

`ResyncingStdin.readline` fixes both before pygls sees the line: a `Content-Length` header at the end
of a line of garbage is cut out of it (the stream is in step again at the next message), header names
are matched case-insensitively as RFC 7230 asks, and a length above `MAX_BODY_BYTES` turns the header
into an ignored line. Only the message with the broken frame is lost (it has no trustworthy length),
never the ones after it. A declared length *longer* than the body cannot be told apart from a slow
client; the server waits for the bytes, as every LSP server must.
"""

from __future__ import annotations

import logging
import re
from typing import BinaryIO

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 256 * 1024 * 1024
"""Larger bodies are refused: 25 times the biggest document the fuzz tests send (10 MB)."""
_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,20})[ \t]*\r?\n\Z", re.IGNORECASE)
_IGNORED = b"X-Dcomplete-Ignored: 1\r\n"


class ResyncingStdin:
    """A read-only binary stream over `raw` with header lines normalised for pygls' reader."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw

    def readline(self) -> bytes:
        line = self._raw.readline()
        found = _HEADER.search(line)
        if found is None:
            return line
        if found.start() > 0:
            logger.warning("dropped %d bytes of unframed input before a Content-Length header", found.start())
        length = int(found.group(1))
        if length > MAX_BODY_BYTES:
            logger.warning("ignored a Content-Length of %d bytes (limit %d)", length, MAX_BODY_BYTES)
            return _IGNORED
        return b"Content-Length: %d\r\n" % length

    def read(self, size: int = -1) -> bytes:
        return self._raw.read(size)

    def close(self) -> None:
        self._raw.close()
