"""Decoding both kafkaexporter encodings, batched and per-trace, and every kind of bad record."""

from __future__ import annotations

import gzip

import pytest

from collector.receivers.decode import DecodeError, Encoding, decode, decompress, encode_json
from collector.spans import flatten
from testkit.rag_traces import encode, make_spans


def test_proto_and_json_decode_to_the_same_spans() -> None:
    sdk_spans = make_spans("openinference") + make_spans("gen_ai")  # two traces in one (batched) record
    proto = decode(encode(sdk_spans), Encoding.OTLP_PROTO)
    as_json = encode_json(proto)
    assert b'"traceId":"' in as_json and len(as_json.split(b'"traceId":"')[1].split(b'"')[0]) == 32  # hex ids
    from_json = decode(as_json)  # auto-detected
    assert [(s.trace_id, s.span_id, s.attributes) for s in flatten(proto)] == [
        (s.trace_id, s.span_id, s.attributes) for s in flatten(from_json)
    ]
    assert len({s.trace_id for s in flatten(proto)}) == 2


@pytest.mark.parametrize(
    ("payload", "encoding", "reason"),
    [
        (b"\x0a\xff\xff\xff\xff\x0f garbage", Encoding.AUTO, "malformed_protobuf"),
        (None, Encoding.OTLP_PROTO, "malformed_protobuf"),  # truncated, filled below
        (b'{"resourceSpans": [', Encoding.AUTO, "malformed_json"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}',
            Encoding.AUTO,
            "malformed_json",
        ),
        (b'{"resourceSpans": "nope"}', Encoding.AUTO, "malformed_json"),
        (b'{"name": "\xff\xfe"}', Encoding.OTLP_JSON, "invalid_utf8"),
        (b"x" * 2048, Encoding.AUTO, "too_large"),
    ],
)
def test_bad_records_raise_a_named_reason(payload: bytes | None, encoding: Encoding, reason: str) -> None:
    if payload is None:
        payload = encode(make_spans("ragpulse"))[:-7]
    with pytest.raises(DecodeError) as caught:
        decode(payload, encoding, max_bytes=1024 if reason == "too_large" else None)
    assert caught.value.reason == reason


def test_protobuf_with_non_utf8_string_is_invalid_utf8() -> None:
    payload = encode(make_spans("ragpulse"))
    bad = payload.replace(b"rag.query", b"rag.\xffuery")
    with pytest.raises(DecodeError) as caught:
        decode(bad)
    assert caught.value.reason == "invalid_utf8"


def test_gzip_is_bounded() -> None:
    body = b"a" * 10_000
    assert decompress(gzip.compress(body), "gzip", 20_000) == body
    with pytest.raises(DecodeError) as caught:
        decompress(gzip.compress(body), "gzip", 1_000)
    assert caught.value.reason == "too_large"
    with pytest.raises(DecodeError):
        decompress(gzip.compress(body)[:-10], "gzip", 20_000)
