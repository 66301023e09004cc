"""`Span` and `LogEvent`: the decoded, flattened views of OTLP spans and log records.

Attribute values are converted from OTLP `AnyValue` once, when a span's attributes are first read,
so conventions work on plain Python values and a trace dropped unread costs no conversion. The
original protobuf span and resource are kept, so a trace that cannot be extracted can be
dead-lettered in the wire format it arrived in.

Log records matter because the official OTel GenAI instrumentation can put message content in
events (log records such as `gen_ai.user.message`) linked to the span by trace and span id; the
assembler attaches them to their span as `Event`s, so conventions read one shape for both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
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


class Span:
    """One span. `attributes` and `events` are converted from the protobuf span on first read (a slot
    left unset until `__getattr__` fills it; plain slot reads after that): a trace that sampling drops
    before it is read (`Sampler.drops_early`) costs no conversion of what no one looks at."""

    __slots__ = (
        "_lazy",
        "attributes",
        "end_ns",
        "events",
        "name",
        "parent_span_id",
        "raw",
        "raw_resource",
        "resource",
        "span_id",
        "start_ns",
        "trace_id",
    )
    attributes: dict[str, Any]
    events: list[Event]

    def __init__(
        self,
        trace_id: str,
        span_id: str,
        parent_span_id: str,
        name: str,
        start_ns: int,
        end_ns: int,
        attributes: dict[str, Any] | None,
        resource: dict[str, Any],
        raw: trace_pb2.Span,
        raw_resource: Resource,
        events: list[Event] | None = None,
    ) -> None:
        """`attributes` or `events` None: converted from `raw` when first read."""
        self.trace_id, self.span_id, self.parent_span_id, self.name = trace_id, span_id, parent_span_id, name
        self.start_ns, self.end_ns, self.resource = start_ns, end_ns, resource
        self.raw, self.raw_resource = raw, raw_resource
        self._lazy = (attributes is None, events is None)
        if attributes is not None:
            self.attributes = attributes
        if events is not None:
            self.events = events

    def __getattr__(self, name: str) -> Any:  # only for a slot not set yet: both are filled at once
        if name != "attributes" and name != "events":
            raise AttributeError(name)
        lazy_attributes, lazy_events = self._lazy
        self._lazy = (False, False)
        if lazy_attributes:
            self.attributes = attributes_dict(self.raw.attributes)
        if lazy_events:
            self.events = [Event(e.name, attributes_dict(e.attributes)) for e in self.raw.events]
        return object.__getattribute__(self, name)

    def attribute_keys(self) -> Iterable[str]:
        """The attribute keys, from the protobuf span while the values are not converted: what a reader
        that looks for a key on every span (feedback) reads without paying for the conversion."""
        if self._lazy[0]:
            return [kv.key for kv in self.raw.attributes]
        return self.attributes.keys()

    def event_names(self) -> Iterable[str]:
        """The events' names, from the protobuf span while the events are not converted."""
        if self._lazy[1]:
            return [event.name for event in self.raw.events]
        return [event.name for event in self.events]

    def _fields(self) -> tuple[Any, ...]:
        return (
            self.trace_id, self.span_id, self.parent_span_id, self.name, self.start_ns, self.end_ns,
            self.attributes, self.resource, self.raw, self.raw_resource, self.events,
        )  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Span) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as the dataclass it was)

    def __repr__(self) -> str:
        return (
            f"Span(trace_id={self.trace_id!r}, span_id={self.span_id!r}, parent_span_id="
            f"{self.parent_span_id!r}, name={self.name!r}, start_ns={self.start_ns}, end_ns={self.end_ns}, "
            f"attributes={self.attributes!r}, resource={self.resource!r}, events={self.events!r})"
        )

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
    """All spans of a TracesData, in order, each with its resource attributes (its own attributes and
    events are converted when first read)."""
    spans: list[Span] = []
    for resource_spans in traces.resource_spans:
        resource = resource_spans.resource
        resource_attrs = attributes_dict(resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for raw in scope_spans.spans:
                spans.append(
                    Span(
                        raw.trace_id.hex(),
                        raw.span_id.hex(),
                        raw.parent_span_id.hex(),
                        raw.name,
                        raw.start_time_unix_nano,
                        raw.end_time_unix_nano,
                        None,  # attributes and events: converted when first read
                        resource_attrs,
                        raw,
                        resource,
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
