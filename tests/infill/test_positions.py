from __future__ import annotations

import pytest

from infill.positions import ByteMap, LineIndex, encoded_length, lsp_to_offset, offset_to_lsp

TEXT = "a😀b = '中文'\r\nx = \"🎉\"\nlast"


def test_utf16_counts_a_surrogate_pair_as_two() -> None:
    offset = TEXT.index("b")
    assert offset == 2
    assert offset_to_lsp(TEXT, offset) == (0, 3)
    assert offset_to_lsp(TEXT, offset, "utf-8") == (0, 5)
    assert offset_to_lsp(TEXT, offset, "utf-32") == (0, 2)


def test_round_trip_every_offset_in_every_encoding() -> None:
    index = LineIndex(TEXT)
    for encoding in ("utf-16", "utf-8", "utf-32"):
        for offset in range(len(TEXT) + 1):
            if TEXT[offset - 1 : offset + 1] == "\r\n":
                continue  # between "\r" and "\n" is not an LSP position
            line, character = index.to_lsp(offset, encoding)
            assert index.from_lsp(line, character, encoding) == offset, (encoding, offset)


def test_cjk_second_line_and_crlf_break() -> None:
    index = LineIndex(TEXT)
    assert index.line_count == 3
    assert index.line_text(0) == "a😀b = '中文'"
    assert index.line_end(0, with_break=True) == TEXT.index("x")
    emoji = TEXT.index("🎉")
    assert index.to_lsp(emoji + 1) == (1, 7)


def test_character_past_line_end_clamps_before_the_break() -> None:
    assert lsp_to_offset(TEXT, 0, 99) == TEXT.index("\r")
    assert lsp_to_offset(TEXT, 9, 0) == len(TEXT)


def test_character_inside_a_surrogate_pair_rounds_down() -> None:
    assert lsp_to_offset(TEXT, 0, 2) == 1


def test_byte_offsets_match_tree_sitter_utf8() -> None:
    bytemap = ByteMap(TEXT)
    encoded = TEXT.encode("utf-8")
    for offset in range(len(TEXT) + 1):
        byte = bytemap.to_byte(offset)
        assert byte == len(TEXT[:offset].encode("utf-8"))
        assert bytemap.to_offset(byte) == offset
        assert encoded[:byte].decode("utf-8") == TEXT[:offset]
    inside_cjk = len(TEXT[: TEXT.index("中")].encode("utf-8")) + 1
    assert bytemap.to_offset(inside_cjk) == TEXT.index("中")


def test_points_are_rows_and_byte_columns() -> None:
    index = LineIndex(TEXT)
    assert index.to_point(TEXT.index("文")) == (0, len("a😀b = '中".encode()))
    assert index.from_point(1, 4) == TEXT.index('"')


def test_encoded_length_and_bad_encoding() -> None:
    assert encoded_length("😀中", "utf-16") == 3
    assert encoded_length("😀中", "utf-8") == 7
    with pytest.raises(ValueError, match="encoding"):
        encoded_length("x", "latin-1")
    with pytest.raises(ValueError, match="outside"):
        offset_to_lsp("abc", 4)
