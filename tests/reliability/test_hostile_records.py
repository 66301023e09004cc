"""No Kafka record can stop the consumer or hold its partition: records nested past any parser's
stack, oversize, with invalid UTF-8, with tens of thousands of spans, or a trace whose root never
arrives are dead-lettered or closed and counted, the offset moves past them, the same process keeps
consuming, and every good trace around them is scored in both exporters."""

from __future__ import annotations

import time

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from testkit.collector_runner import wait_for
from testkit.hostile import nested_protobuf
from testkit.kafka_read import read_topic
from testkit.otlp_sink import OtlpSink
from testkit.rag_traces import encode, make_spans
from testkit.reliability import Stack, status
from tests.reliability.conftest import Report


def _invalid_utf8() -> bytes:
    """A trace whose query attribute is not UTF-8 (a string field protobuf must reject)."""
    request = ExportTraceServiceRequest.FromString(encode(make_spans("openinference")))
    attribute = request.resource_spans[0].scope_spans[0].spans[0].attributes[0]
    attribute.value.string_value = "QUERY_MARKER"
    return request.SerializeToString().replace(b"QUERY_MARKER", b"\xff\xfe\xfd invalid")


def _orphans() -> bytes:
    """A trace's spans without its root: the root never arrives, so the trace never ends by itself."""
    spans = [s for s in make_spans("openinference") if s.parent is not None]
    return encode(spans)


def _many_spans(count: int) -> bytes:
    """One record, `count` spans of `count` traces, none with RAG data."""
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for i in range(count):
        span = scope.spans.add()
        span.trace_id, span.span_id, span.name = (i + 1).to_bytes(16, "big"), (i + 1).to_bytes(8, "big"), "x"
    return request.SerializeToString()


HOSTILE = {
    "json nested 100,000 deep": b'{"resourceSpans":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "protobuf nested 100,000 deep": nested_protobuf(100_000),
    "over kafka.max_record_bytes": b"\x0a" * 300_000,
    "invalid UTF-8": _invalid_utf8(),
    "20,000 spans in one record": _many_spans(20_000),
    "a root that never arrives": _orphans(),
    "empty": b"",
    "not OTLP at all": b"GET / HTTP/1.1\r\n\r\n",
}


def test_hostile_records_cost_one_dead_letter_each_and_nothing_else(
    kafka_bootstrap: str, sink: OtlpSink, report: Report
) -> None:
    stack = Stack(
        kafka_bootstrap,
        sink,
        partitions=1,
        extra_env={"RAGPULSE_KAFKA__MAX_RECORD_BYTES": "200000", "RAGPULSE_ASSEMBLY__MAX_AGE_S": "5"},
    )
    try:
        replica = stack.start_replica()
        pid = replica.process.pid if replica.process else 0
        for value in HOSTILE.values():
            stack.produce(3)
            stack.produce_raw([value])
        stack.produce(3)
        total = len(stack.produced) + len(HOSTILE)
        started = time.monotonic()
        ledger = stack.wait_until_scored(120)
        wait_for(lambda: stack.committed() == total, 60, "the offset past every record")
        committed_s = time.monotonic() - started
        letters = read_topic(stack.bootstrap, stack.dlq_topic)
        alive, same_process = status(replica, "/healthz"), replica.process and replica.process.pid == pid
        assert replica.process is not None and replica.process.poll() is None, replica.output()[-3000:]
    finally:
        stack.close()
    report.figure(
        f"{len(HOSTILE)} hostile records among {ledger.produced} good traces: {ledger.line()}; "
        f"{len(letters)} dead letters; offset past all {total} records {committed_s:.1f}s after the last; "
        f"same process {bool(same_process)}"
    )
    assert ledger.lost == 0, ledger.line()
    assert alive == 200 and same_process
    # Undecodable ones are dead-lettered once each; the orphans and the span flood are valid OTLP
    # (closed at max_age_s and counted, not dead letters); the empty record carries nothing.
    assert 5 <= len(letters) <= 6, len(letters)
