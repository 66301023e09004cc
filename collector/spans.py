"""`Span`: the decoded, flattened view of one OTLP span that the later stages read.

Attribute values are converted from OTLP `AnyValue` once, at decode time, so conventions work on
plain Python values. The original protobuf span and resource are kept, so a trace that cannot be
extracted can be dead-lettered in the wire format it arrived in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1 import trace_pb2


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
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

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
                        events=[(e.name, attributes_dict(e.attributes)) for e in raw.events],
                    )
                )
    return spans


def to_traces_data(spans: list[Span]) -> trace_pb2.TracesData:
    """Re-encode spans (e.g. one trace for the dead-letter topic), one ResourceSpans per span."""
    out = trace_pb2.TracesData()
    for span in spans:
        resource_spans = out.resource_spans.add()
        resource_spans.resource.CopyFrom(span.raw_resource)
        resource_spans.scope_spans.add().spans.append(span.raw)
    return out
