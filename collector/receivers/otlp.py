"""One OTLP export request (or Kafka record) of either signal, whatever transport carried it.

The OTLP/HTTP and OTLP/gRPC receivers differ only in how the bytes arrive and how the outcome is
spelled (HTTP status or gRPC code); decoding, dropping invalid items, counting, dead-lettering and
the partial-success answer live here once, so both answer the same request the same way. The Kafka
receiver uses `decode_batch` too: its records are the same messages.

Validation follows the OTLP spec's partial success: a span whose trace or span id is not 16/8
non-zero bytes cannot be assembled, so it is dropped and reported as rejected, while its siblings
are kept. A log record without trace context is not an error, it is simply not used (only records
linked to a span describe a RAG request); one with a malformed id is rejected.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from enum import StrEnum

from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceResponse,
)
from pydantic import BaseModel, ConfigDict, Field

from collector.logs import RateLimitedLog
from collector.metrics import LOG_RECORDS_RECEIVED, RECEIVER_REJECTED, SPANS_RECEIVED, RejectReason
from collector.pipeline.offsets import NoAck
from collector.receivers.decode import DecodeError, Encoding, Signal, decode, decode_logs, decompress
from collector.receivers.forward import ForwardConfig, OtlpForwarder
from collector.receivers.otlp_metrics import count_from_zero
from collector.spans import LogEvent, Span, flatten, flatten_logs
from collector.stages import DeadLetter, DeadLetterSink, Deliver, Received, internal_error_detail

logger = logging.getLogger(__name__)

_ZERO_TRACE_ID, _ZERO_SPAN_ID = "0" * 32, "0" * 16


class OtlpConfig(BaseModel):
    """The embedded OTLP receivers, used when Kafka is not set: HTTP always, gRPC unless `grpc_port` is -1."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = Field("127.0.0.1", description="Listen address; 0.0.0.0 to accept from other hosts.")
    port: int = Field(4318, ge=0, le=65535, description="OTLP/HTTP; 0 = an ephemeral port.")
    grpc_port: int = Field(4317, ge=-1, le=65535, description="OTLP/gRPC; 0 = ephemeral, -1 = disabled.")
    max_body_bytes: int = Field(
        8 * 1024 * 1024, ge=1024, description="Largest request, compressed and decompressed."
    )
    grpc_workers: int = Field(8, ge=1, description="OTLP/gRPC requests decoded concurrently.")
    request_timeout_s: float = Field(
        30.0,
        gt=0,
        description="OTLP/HTTP: the headers, and then the body, must each arrive within this; a slower "
        "client is cut off (408 for a body), so half-sent requests hold nothing for long.",
    )
    max_connections: int = Field(
        1000, ge=1, description="OTLP/HTTP connections at once; beyond it 503 (exporters retry)."
    )
    max_connections_per_client: int | None = Field(
        None,
        ge=1,
        description="OTLP/HTTP connections at once from one client address (an IPv6 client by its /64); "
        "beyond it 503, without taking any of `max_connections`. Unset: a quarter of `max_connections`, "
        "at least 16.",
    )
    forward: ForwardConfig = Field(
        default_factory=ForwardConfig, description="Accepted requests also go on to this OTLP endpoint."
    )

    @property
    def connections_per_client(self) -> int:
        """A quarter: one address (a flood, or a client gone wrong) leaves three quarters of the slots
        to the others, yet a legitimate crowd behind one address fits (every app of a pod on loopback,
        the pods of a node behind SNAT, a Collector's exporter queue); 16 for a small `max_connections`."""
        chosen = self.max_connections_per_client or max(16, self.max_connections // 4)
        return min(chosen, self.max_connections)


@dataclass(slots=True)
class Batch:
    """What one payload holds that the pipeline can use, and how many items were rejected."""

    spans: list[Span] = field(default_factory=list)
    logs: list[LogEvent] = field(default_factory=list)
    rejected: int = 0

    def rejection_message(self, signal: Signal) -> str:
        if not self.rejected:
            return ""
        items = "spans" if signal is Signal.TRACES else "log records"
        return f"{items} with an invalid trace or span id dropped: {self.rejected}"


def decode_batch(signal: Signal, payload: bytes, encoding: Encoding, max_bytes: int) -> Batch:
    """Decode and validate one payload; raises `DecodeError` for bytes that are not that signal."""
    if signal is Signal.TRACES:
        spans = flatten(decode(payload, encoding, max_bytes))
        valid = [s for s in spans if _valid_ids(s.trace_id, s.span_id) and _valid_parent(s.parent_span_id)]
        return Batch(spans=valid, rejected=len(spans) - len(valid))
    logs = flatten_logs(decode_logs(payload, encoding, max_bytes))
    valid_logs = [log for log in logs if _valid_ids(log.trace_id, log.span_id)]
    return Batch(logs=valid_logs, rejected=len(logs) - len(valid_logs))


def _valid_ids(trace_id: str, span_id: str) -> bool:
    lengths_ok = len(trace_id) == 32 and len(span_id) == 16
    return lengths_ok and trace_id != _ZERO_TRACE_ID and span_id != _ZERO_SPAN_ID


def _valid_parent(parent_span_id: str) -> bool:
    return parent_span_id == "" or (len(parent_span_id) == 16 and parent_span_id != _ZERO_SPAN_ID)


def count(batch: Batch, source: str) -> None:
    if batch.spans:
        SPANS_RECEIVED.labels(source).inc(len(batch.spans))
    if batch.logs:
        LOG_RECORDS_RECEIVED.labels(source).inc(len(batch.logs))


def count_rejected(receiver: str, outcome: RequestOutcome) -> None:
    """A request the intake refused, in `ragpulse_receiver_rejected_total` (a 500 is ours, not counted)."""
    reason = _REJECT_REASONS.get(outcome)
    if reason is not None:
        RECEIVER_REJECTED.labels(receiver, reason).inc()


def dead_letter_source(source: str, signal: Signal) -> str:
    """The `ragpulse.source` header: a logs payload says so, since it decodes as another message."""
    return source if signal is Signal.TRACES else f"{source}/logs"


class RequestOutcome(StrEnum):
    ACCEPTED = "accepted"  # possibly with rejected items: a partial success
    INVALID = "invalid"  # not retryable: HTTP 400, gRPC INVALID_ARGUMENT
    TOO_LARGE = "too_large"  # HTTP 413, gRPC RESOURCE_EXHAUSTED
    TIMEOUT = "timeout"  # HTTP 408: the client did not send its body in time (retryable)
    INTERNAL = "internal"  # a bug of ours: HTTP 500, gRPC INTERNAL
    UNAVAILABLE = "unavailable"  # stopping, retry later or elsewhere: HTTP 503, gRPC UNAVAILABLE


_REJECT_REASONS: dict[RequestOutcome, RejectReason] = {
    RequestOutcome.INVALID: "bad_body",
    RequestOutcome.TOO_LARGE: "too_large",
    RequestOutcome.TIMEOUT: "timeout",
    RequestOutcome.UNAVAILABLE: "shutting_down",
}

# google.rpc.Code numbers, for the Status body of an HTTP error (the OTLP/HTTP spec asks for one).
_RPC_CODES = {
    RequestOutcome.INVALID: 3,
    RequestOutcome.TOO_LARGE: 8,
    RequestOutcome.TIMEOUT: 4,  # DEADLINE_EXCEEDED
    RequestOutcome.INTERNAL: 13,
    RequestOutcome.UNAVAILABLE: 14,
}


@dataclass(frozen=True, slots=True)
class ExportResult:
    outcome: RequestOutcome
    rejected: int = 0
    message: str = ""

    def response(self, signal: Signal) -> Message:
        """The Export*ServiceResponse of an accepted request, `partial_success` set on rejections."""
        if signal is Signal.TRACES:
            traces = ExportTraceServiceResponse()
            if self.rejected:
                traces.partial_success.CopyFrom(
                    ExportTracePartialSuccess(rejected_spans=self.rejected, error_message=self.message)
                )
            return traces
        logs = ExportLogsServiceResponse()
        if self.rejected:
            logs.partial_success.CopyFrom(
                ExportLogsPartialSuccess(rejected_log_records=self.rejected, error_message=self.message)
            )
        return logs

    def status(self) -> Status:
        return Status(code=_RPC_CODES.get(self.outcome, 0), message=self.message)


def serialize(message: Message, encoding: Encoding) -> bytes:
    """A response body in the request's encoding (OTLP/JSON for JSON requests)."""
    if encoding is Encoding.OTLP_JSON:
        return json.dumps(json_format.MessageToDict(message), separators=(",", ":")).encode()
    return message.SerializeToString()


_MEDIA_TYPES = {Encoding.OTLP_PROTO: "application/x-protobuf", Encoding.OTLP_JSON: "application/json"}


class OtlpIntake:
    """Turns one request body into spans/log events for the pipeline, or a dead letter; an accepted
    request is also handed, as received, to the forwarder (`otlp.forward`) when there is one."""

    def __init__(
        self,
        source: str,
        dead_letters: DeadLetterSink,
        max_bytes: int,
        forwarder: OtlpForwarder | None = None,
    ) -> None:
        self.source, self.max_bytes = source, max_bytes
        self._dead_letters = dead_letters
        self._forwarder = forwarder
        self._error_log = RateLimitedLog(interval_s=10.0)

    def export(
        self,
        signal: Signal,
        payload: bytes,
        encoding: Encoding,
        deliver: Deliver,
        content_encoding: str | None = None,
    ) -> ExportResult:
        """Never raises: anything unexpected is dead-lettered as `internal_error` and answered so."""
        try:
            body = decompress(payload, content_encoding, self.max_bytes)
            batch = decode_batch(signal, body, encoding, self.max_bytes)
            count(batch, self.source)
            if batch.spans or batch.logs:
                deliver(Received(spans=batch.spans, ack=NoAck(), source=self.source, logs=batch.logs))
        except DecodeError as exc:
            self._dead_letter(signal, exc.reason, exc.detail, payload)
            outcome = RequestOutcome.TOO_LARGE if exc.reason == "too_large" else RequestOutcome.INVALID
            return ExportResult(outcome, message=str(exc))
        except Exception as exc:
            detail = internal_error_detail(exc)
            self._error_log.log(logger, exc, "%s %s request failed (%s)", self.source, signal, detail)
            self._dead_letter(signal, "internal_error", detail, payload)
            return ExportResult(RequestOutcome.INTERNAL, message=detail)
        if self._forwarder is not None:  # the bytes the client sent, still compressed
            self._forwarder.forward(signal, payload, _media_type(encoding, body), content_encoding)
        return ExportResult(RequestOutcome.ACCEPTED, batch.rejected, batch.rejection_message(signal))

    def _dead_letter(self, signal: Signal, reason: str, detail: str, payload: bytes) -> None:
        """The client gets its answer either way; an OTLP request has no offset to keep."""
        letter = DeadLetter(reason, detail, payload, source=dead_letter_source(self.source, signal))
        try:
            self._dead_letters.write(letter, on_written=_nothing)
        except Exception as exc:
            self._error_log.log(logger, exc, "dead letter from %s failed (%s)", self.source, exc)


class OtlpReceiver:
    """What the OTLP/HTTP and OTLP/gRPC receivers share: their config, an intake under the receiver's
    `name`, its series counted from zero, and `ready` (taking requests: from `start` until shutdown)."""

    name: str  # the receiver's label in metrics and its dead letters' source

    def __init__(
        self, config: OtlpConfig, dead_letters: DeadLetterSink, forwarder: OtlpForwarder | None = None
    ) -> None:
        self.config = config
        self._intake = OtlpIntake(self.name, dead_letters, config.max_body_bytes, forwarder)
        self._deliver: Deliver | None = None
        self._accepting = False
        count_from_zero(self.name)

    @property
    def ready(self) -> bool:
        return self._accepting


def _nothing() -> None:
    pass


def _media_type(encoding: Encoding, body: bytes) -> str:
    """The Content-Type to forward with; AUTO is resolved the way `collector.receivers.decode` does."""
    if encoding is Encoding.AUTO:
        encoding = Encoding.OTLP_JSON if body.lstrip()[:1] in (b"{", b"[") else Encoding.OTLP_PROTO
    return _MEDIA_TYPES[encoding]
