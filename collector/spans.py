"""`Span` and `LogEvent`: the decoded, flattened views of OTLP spans and log records.

Attribute values are converted from OTLP `AnyValue` once, at decode time, so conventions work on
plain Python values. The original protobuf span and resource are kept, so a trace that cannot be
extracted can be dead-lettered in the wire format it arrived in.

Log records matter because the official OTel GenAI instrumentation can put message content in
events (log records such as `gen_ai.user.message`) linked to the span by trace and span id; the
assembler attaches them to their span as `Event`s, so conventions read one shape for both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1 import trace_pb2


@dataclass(slots=True)
class Event:
    """A span event, or a log record joined to its span; `body` is set only for log records."""

    name: str
    attributes: dict[str, Any]
    body: Any = None


@dataclass(slots=True)
class Span:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    raw: trace_pb2.Span = field(repr=False)
    raw_resource: Resource = field(repr=False)
    events: list[Event] = field(default_factory=list)

    @property
    def is_root(self) -> bool:
        return not self.parent_span_id

    @property
    def service(self) -> str:
        return str(self.resource.get("service.name", "unknown"))


def any_value(value: AnyValue) -> Any:
    """Convert an OTLP AnyValue to str/bool/int/float/bytes/list/dict (None when unset)."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        return value.double_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value
    return None


def attributes_dict(attributes: Any) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in attributes}


def flatten(traces: trace_pb2.TracesData) -> list[Span]:
    """All spans of a TracesData, in order, each with its resource attributes."""
    spans: list[Span] = []
    for resource_spans in traces.resource_spans:
        resource = resource_spans.resource
        resource_attrs = attributes_dict(resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for raw in scope_spans.spans:
                spans.append(
                    Span(
                        trace_id=raw.trace_id.hex(),
                        span_id=raw.span_id.hex(),
                        parent_span_id=raw.parent_span_id.hex(),
                        name=raw.name,
                        start_ns=raw.start_time_unix_nano,
                        end_ns=raw.end_time_unix_nano,
                        attributes=attributes_dict(raw.attributes),
                        resource=resource_attrs,
                        raw=raw,
                        raw_resource=resource,
                        events=[Event(e.name, attributes_dict(e.attributes)) for e in raw.events],
                    )
                )
    return spans


@dataclass(slots=True)
class LogEvent:
    """One OTLP log record that belongs to a span (records without a trace context are skipped)."""

    trace_id: str
    span_id: str
    event: Event


def flatten_logs(logs: logs_pb2.LogsData) -> list[LogEvent]:
    """The log records of a LogsData that carry a trace and span id, as events.

    The event name is the record's `event_name` field, or the older `event.name` attribute.
    """
    out: list[LogEvent] = []
    for resource_logs in logs.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                if not record.trace_id or not record.span_id:
                    continue
                attributes = attributes_dict(record.attributes)
                name = getattr(record, "event_name", "") or str(attributes.get("event.name", ""))
                body = any_value(record.body) if record.HasField("body") else None
                out.append(
                    LogEvent(record.trace_id.hex(), record.span_id.hex(), Event(name, attributes, body))
                )
    return out


def to_traces_data(spans: list[Span]) -> trace_pb2.TracesData:
    """Re-encode spans (e.g. one trace for the dead-letter topic), one ResourceSpans per span."""
    out = trace_pb2.TracesData()
    for span in spans:
        resource_spans = out.resource_spans.add()
        resource_spans.resource.CopyFrom(span.raw_resource)
        resource_spans.scope_spans.add().spans.append(span.raw)
    return out
