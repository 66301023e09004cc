"""Hostile payloads built byte by byte: deeper nesting than any encoder would produce, cheaply."""

from __future__ import annotations


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def nested_protobuf(levels: int, logs: bool = False) -> bytes:
    """TracesData whose one attribute (or LogsData whose one body) is an AnyValue array nested
    `levels` deep, built in O(levels)."""
    prefixes, length = [], 0
    for _ in range(levels):  # AnyValue{array_value(5): ArrayValue{values(1): [inner]}}
        for tag in (b"\x0a", b"\x2a"):
            prefixes.append(tag + varint(length))
            length += len(prefixes[-1])
    body = b"".join(reversed(prefixes))
    # KeyValue.value, Span.attributes, ... or LogRecord.body, ScopeLogs.log_records, ...
    for tag in (
        (b"\x2a", b"\x12", b"\x12", b"\x0a") if logs else (b"\x12", b"\x4a", b"\x12", b"\x12", b"\x0a")
    ):
        body = tag + varint(len(body)) + body
    return body
