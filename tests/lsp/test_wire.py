"""The stdin wrapper that keeps pygls' header reader in step after broken framing."""

from __future__ import annotations

import io

from lsp_server.wire import MAX_BODY_BYTES, ResyncingStdin


def lines(data: bytes) -> list[bytes]:
    stream = ResyncingStdin(io.BytesIO(data))  # type: ignore[arg-type]
    return list(iter(stream.readline, b""))


def test_a_header_glued_to_an_unframed_body_is_cut_out() -> None:
    assert lines(b'{"lost": 1}Content-Length: 12\r\n') == [b"Content-Length: 12\r\n"]


def test_header_names_are_case_insensitive_and_spacing_is_loose() -> None:
    assert lines(b"content-length:7\r\n") == [b"Content-Length: 7\r\n"]
    assert lines(b"CONTENT-LENGTH :  7 \n") == [b"Content-Length: 7\r\n"]


def test_a_huge_length_becomes_an_ignored_line_and_other_headers_pass() -> None:
    huge, other = b"Content-Length: %d\r\n" % (MAX_BODY_BYTES + 1), b"Content-Type: x\r\n"
    assert lines(huge + other) == [b"X-Dcomplete-Ignored: 1\r\n", other]
