"""Decode Kafka record values / OTLP request bodies into `TracesData` or `LogsData`.

The OTel Collector's kafkaexporter writes `otlp_proto` (an `ExportTraceServiceRequest`, which is
byte-identical to `TracesData`; likewise `ExportLogsServiceRequest` and `LogsData`) or `otlp_json`
(its JSON mapping, where ids are hex strings, not base64 as protobuf's generic JSON mapping
expects). Failures raise `DecodeError` with a low-cardinality `reason`, used as the dead-letter
header and the counter label; no other exception escapes, whatever the bytes.
"""

from __future__ import annotations

import base64
import json
import zlib
from enum import StrEnum
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.protobuf.message import Message
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

M = TypeVar("M", bound=Message)


class Signal(StrEnum):
    """What an OTLP payload carries: spans or log records."""

    TRACES = "traces"
    LOGS = "logs"


class Encoding(StrEnum):
    AUTO = "auto"
    OTLP_PROTO = "otlp_proto"
    OTLP_JSON = "otlp_json"


class DecodeError(Exception):
    """A record that cannot be decoded; `reason` is a fixed, low-cardinality word."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"})


def decode(
    payload: bytes, encoding: Encoding = Encoding.AUTO, max_bytes: int | None = None
) -> trace_pb2.TracesData:
    """Decode one traces record or request body; `max_bytes` bounds the (decompressed) size."""
    return decode_message(payload, trace_pb2.TracesData, encoding, max_bytes)


def decode_logs(
    payload: bytes, encoding: Encoding = Encoding.AUTO, max_bytes: int | None = None
) -> logs_pb2.LogsData:
    """Decode one logs record or request body (`otlp_logs` topic, `POST /v1/logs`)."""
    return decode_message(payload, logs_pb2.LogsData, encoding, max_bytes)


def decode_message(
    payload: bytes, message_type: type[M], encoding: Encoding = Encoding.AUTO, max_bytes: int | None = None
) -> M:
    if max_bytes is not None and len(payload) > max_bytes:
        raise DecodeError("too_large", f"{len(payload)} bytes > limit {max_bytes}")
    if encoding is Encoding.AUTO:
        encoding = Encoding.OTLP_JSON if payload.lstrip()[:1] in (b"{", b"[") else Encoding.OTLP_PROTO
    if encoding is Encoding.OTLP_PROTO:
        return _decode_proto(payload, message_type)
    return _decode_json(payload, message_type)


def _decode_proto(payload: bytes, message_type: type[M]) -> M:
    try:
        return message_type.FromString(payload)
    except ProtobufDecodeError as exc:
        reason = "invalid_utf8" if "UTF-8" in str(exc) else "malformed_protobuf"
        raise DecodeError(reason, str(exc)) from None
    except (RecursionError, ValueError, TypeError) as exc:  # nesting beyond protobuf's own limit
        raise DecodeError("malformed_protobuf", f"{type(exc).__name__}: {exc}"[:300]) from None


def _decode_json(payload: bytes, message_type: type[M]) -> M:
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError("invalid_utf8", str(exc)) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DecodeError("malformed_json", str(exc)) from None
    except RecursionError:
        raise DecodeError("malformed_json", "JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit for str conversion
        raise DecodeError("malformed_json", str(exc)[:300]) from None
    if not isinstance(document, dict):
        raise DecodeError("malformed_json", "top level is not an object")
    try:
        _hex_ids_to_base64(document)
        return json_format.ParseDict(document, message_type(), ignore_unknown_fields=True)
    except RecursionError:
        raise DecodeError("malformed_json", "JSON nested too deeply") from None
    except (json_format.ParseError, ValueError, TypeError, AttributeError) as exc:
        raise DecodeError("malformed_json", str(exc)[:300]) from None


def _hex_ids_to_base64(node: Any) -> None:
    """OTLP/JSON encodes trace and span ids as hex; protobuf's JSON parser expects base64."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_KEYS and isinstance(value, str):
                try:
                    node[key] = base64.b64encode(bytes.fromhex(value)).decode()
                except ValueError:
                    raise ValueError(f"{key} is not hex: {value[:40]!r}") from None
            else:
                _hex_ids_to_base64(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids_to_base64(item)


def decompress(body: bytes, content_encoding: str | None, max_bytes: int) -> bytes:
    """Inflate a gzip/deflate HTTP body without ever holding more than `max_bytes` of output."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise DecodeError("unsupported_encoding", f"Content-Encoding {encoding!r}")
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(body, max_bytes + 1)
    except zlib.error as exc:
        raise DecodeError("malformed_compression", str(exc)) from None
    if len(out) > max_bytes:
        raise DecodeError("too_large", f"decompressed body over limit {max_bytes}")
    if not inflater.eof:
        raise DecodeError("malformed_compression", "truncated compressed body")
    return out


def encode_json(traces: trace_pb2.TracesData) -> bytes:
    """OTLP/JSON (hex ids), as the kafkaexporter's `otlp_json` encoding writes it."""
    document = json_format.MessageToDict(traces)
    _base64_ids_to_hex(document)
    return json.dumps(document, separators=(",", ":")).encode()


def _base64_ids_to_hex(node: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_KEYS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _base64_ids_to_hex(value)
    elif isinstance(node, list):
        for item in node:
            _base64_ids_to_hex(item)


__all__ = ["DecodeError", "Encoding", "decode", "decode_logs", "decode_message", "decompress", "encode_json"]
