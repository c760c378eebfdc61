"""A GGUF file's metadata and tensor table, read straight from the mapped file.

The `gguf` package's reader builds a numpy view for every part of every field, the tokenizer's 49,152 tokens
and 48,900 merges included: 4-5 s for the bundled SmolLM2 on a busy 2-core machine, at the first start of
every new user. This reads the layout that the GGUF format (version 2 and 3) defines: the magic `GGUF`, a
uint32 version, uint64 counts of tensors and of metadata pairs; each pair a string key, a uint32 value type
and the value (strings are a uint64 length and UTF-8 bytes; arrays a uint32 element type, a uint64 count and
the elements); then per tensor its name, a uint32 dimension count, uint64 dimensions (the fastest-moving
first), a uint32 ggml type and a uint64 offset from the start of the data, which begins at the next
multiple of `general.alignment` (32 by default) after the table. String arrays are stepped over, not
decoded: nothing here needs the vocabulary (the tokenizer is converted by `transformers`).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
VERSIONS = (2, 3)


@dataclass(frozen=True)
class TensorEntry:
    name: str
    kind: str  # the ggml type's name: F32, F16, Q4_1, ...
    shape: tuple[int, ...]  # rows first (torch order)
    offset: int  # from the start of the file
    nbytes: int


@dataclass(frozen=True)
class Header:
    fields: dict[str, Any]  # string arrays are given as their length
    tensors: tuple[TensorEntry, ...]


def read_header(path: Path) -> Header:
    """`path`'s metadata and tensor table; ValueError for a file that is not GGUF v2/v3 or is cut short."""
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        try:
            return _Cursor(data).header()
        except struct.error as exc:
            raise ValueError(f"cut short ({exc})") from None


class _Cursor:
    def __init__(self, data: mmap.mmap) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.take("<Q")
        raw = self.data[self.at : self.at + length]
        if len(raw) != length:
            raise struct.error("a string runs past the end of the file")
        self.at += length
        return raw.decode("utf-8", errors="replace")

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.take(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind != _ARRAY:
            raise ValueError(f"unknown metadata value type {kind}")
        element, count = self.take("<I"), self.take("<Q")
        if element == _STRING:
            for _ in range(count):
                self.at += 8 + struct.unpack_from("<Q", self.data, self.at)[0]
            return count
        if element not in _SCALARS:
            raise ValueError(f"unsupported array element type {element}")
        fmt = _SCALARS[element]
        values = list(struct.unpack_from(f"<{count}{fmt[1]}", self.data, self.at))
        self.at += count * struct.calcsize(fmt)
        return values

    def header(self) -> Header:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        if self.data[:4] != b"GGUF":
            raise ValueError("no GGUF magic number")
        self.at = 4
        version = self.take("<I")
        if version not in VERSIONS:
            raise ValueError(f"GGUF version {version}; versions {VERSIONS} are read")
        tensor_count, field_count = self.take("<Q"), self.take("<Q")
        fields: dict[str, Any] = {}
        for _ in range(field_count):
            key = self.string()
            fields[key] = self.value(self.take("<I"))
        table = []
        for _ in range(tensor_count):
            name = self.string()
            dims = [self.take("<Q") for _ in range(self.take("<I"))]
            table.append((name, dims, self.take("<I"), self.take("<Q")))
        alignment = int(fields.get("general.alignment", 32))
        start = -(-self.at // alignment) * alignment
        tensors = []
        for name, dims, kind, offset in table:
            try:
                ggml = GGMLQuantizationType(kind)
            except ValueError:
                raise ValueError(f"tensor {name}: unknown ggml type {kind}") from None
            block, size = GGML_QUANT_SIZES[ggml]
            elements = 1
            for d in dims:
                elements *= d
            tensors.append(TensorEntry(name, ggml.name, tuple(reversed(dims)), start + offset,
                                       elements // block * size))
        return Header(fields, tuple(tensors))
