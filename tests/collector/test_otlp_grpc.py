"""The embedded OTLP/gRPC receiver, driven by the SDK's real gRPC exporters and by raw channel calls."""

from __future__ import annotations

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2_grpc import LogsServiceStub
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub

from collector.metrics import REGISTRY
from collector.receivers.decode import decode
from collector.receivers.otlp import OtlpConfig
from collector.receivers.otlp_grpc import OtlpGrpcReceiver
from collector.stages import Received
from testkit.collector_runner import RunningCollector, wait_for
from testkit.genai_logs import ANSWER, QUESTION, assembled_spans, chat_with_message_logs, message_events
from testkit.rag_traces import BUILDERS, RagCase, encode, make_spans, provider
from tests.collector.test_otlp_receiver import RecordedDeadLetters

TRACES_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
MAX_BODY = 64 * 1024


class GrpcReceiver:
    """The receiver on an ephemeral port, a channel to it, and what it delivered or set aside."""

    def __init__(self) -> None:
        self.batches: list[Received] = []
        self.dead_letters = RecordedDeadLetters()
        self.receiver = OtlpGrpcReceiver(OtlpConfig(grpc_port=0, max_body_bytes=MAX_BODY), self.dead_letters)
        self.fail_next = False

    def deliver(self, received: Received) -> None:
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("pipeline went away")
        self.batches.append(received)

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.receiver.port}"

    def raw_export(self, payload: bytes) -> grpc.RpcError:
        """Send bytes as a TraceService/Export request, unserialized; return the call's error."""
        with grpc.insecure_channel(self.endpoint) as channel:
            call = channel.unary_unary(TRACES_EXPORT)
            with pytest.raises(grpc.RpcError) as error:
                call(payload, timeout=10)
        return error.value


@pytest.fixture
def otlp_grpc():
    otlp = GrpcReceiver()
    otlp.receiver.start(otlp.deliver)
    try:
        yield otlp
    finally:
        otlp.receiver.shutdown(5)


def test_sdk_grpc_exporters_spans_and_message_logs_join(otlp_grpc: GrpcReceiver) -> None:
    trace_id, span_id = chat_with_message_logs(
        OTLPSpanExporter(endpoint=otlp_grpc.endpoint, insecure=True, compression=grpc.Compression.Gzip),
        OTLPLogExporter(endpoint=otlp_grpc.endpoint, insecure=True),
    )
    assert otlp_grpc.dead_letters.letters == []
    assert {b.source for b in otlp_grpc.batches} == {"otlp_grpc"}
    span = assembled_spans(otlp_grpc.batches)[span_id]
    assert span.trace_id == trace_id
    assert message_events(span)[0] == ("gen_ai.user.message", {"content": QUESTION})
    assert message_events(span)[1][1]["message"]["content"] == ANSWER  # type: ignore[index]


def test_undecodable_is_invalid_argument_and_dead_lettered(otlp_grpc: GrpcReceiver) -> None:
    labels = {"receiver": "otlp_grpc", "reason": "bad_body"}
    before = REGISTRY.get_sample_value("ragpulse_receiver_rejected_total", labels) or 0
    error = otlp_grpc.raw_export(b"\x0a\xff\xff\xff\xff\x0f")
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [(r, s) for r, _, s in otlp_grpc.dead_letters.letters] == [("malformed_protobuf", "otlp_grpc")]
    assert REGISTRY.get_sample_value("ragpulse_receiver_rejected_total", labels) == before + 1


def test_too_large_is_resource_exhausted(otlp_grpc: GrpcReceiver) -> None:
    error = otlp_grpc.raw_export(b"\x0a" * (MAX_BODY + 1024))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # compressed small, inflated over the limit: grpc checks the decompressed message too
    request = ExportTraceServiceRequest.FromString(encode(make_spans("ragpulse")))
    request.resource_spans[0].resource.attributes.add(key="padding").value.string_value = "x" * MAX_BODY
    gzip_channel = grpc.insecure_channel(otlp_grpc.endpoint, compression=grpc.Compression.Gzip)
    with gzip_channel, pytest.raises(grpc.RpcError) as error_info:
        TraceServiceStub(gzip_channel).Export(request, timeout=10)
    assert error_info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert otlp_grpc.batches == []


def test_partial_success_internal_error_and_unavailable(otlp_grpc: GrpcReceiver) -> None:
    traces = decode(encode(make_spans("ragpulse")))
    traces.resource_spans[0].scope_spans[0].spans.add(trace_id=b"\x01\x02\x03", span_id=b"\x01" * 8)
    request = ExportTraceServiceRequest.FromString(traces.SerializeToString())
    with grpc.insecure_channel(otlp_grpc.endpoint) as channel:
        response = TraceServiceStub(channel).Export(request, timeout=10)
        assert response.partial_success.rejected_spans == 1
        logs = ExportLogsServiceRequest()
        logs.resource_logs.add().scope_logs.add().log_records.add(trace_id=b"\x01\x02", span_id=b"\x01" * 8)
        logs_response = LogsServiceStub(channel).Export(logs, timeout=10)
        assert logs_response.partial_success.rejected_log_records == 1
        otlp_grpc.fail_next = True
        with pytest.raises(grpc.RpcError) as internal:
            TraceServiceStub(channel).Export(request, timeout=10)
        assert internal.value.code() == grpc.StatusCode.INTERNAL
        assert TraceServiceStub(channel).Export(request, timeout=10).partial_success.rejected_spans == 1
        otlp_grpc.receiver.stop()
        with pytest.raises(grpc.RpcError) as unavailable:
            TraceServiceStub(channel).Export(request, timeout=10)
        assert unavailable.value.code() == grpc.StatusCode.UNAVAILABLE
    assert otlp_grpc.dead_letters.letters == [
        ("internal_error", "RuntimeError: pipeline went away", "otlp_grpc")
    ]
    assert [len(b.spans) for b in otlp_grpc.batches] == [1, 1]


def test_embedded_collector_runs_both_receivers() -> None:
    """`ragpulse run` without Kafka: the gRPC exporter's spans become records like the HTTP ones."""
    with RunningCollector() as collector:
        http_receiver, grpc_receiver = collector.service.receivers
        assert collector.service.receiver is http_receiver and grpc_receiver.port > 0
        exporter = OTLPSpanExporter(endpoint=f"127.0.0.1:{grpc_receiver.port}", insecure=True)
        BUILDERS["openinference"](provider(exporter), RagCase(query="over grpc"))
        wait_for(lambda: len(collector.records) >= 1, 30, "the gRPC trace's record")
    assert collector.records[0]["query"] == "over grpc"


def test_a_taken_port_fails_loudly(otlp_grpc: GrpcReceiver) -> None:
    """No SO_REUSEPORT: a second receiver on a taken port must not silently share it."""
    second = OtlpGrpcReceiver(OtlpConfig(grpc_port=otlp_grpc.receiver.port), RecordedDeadLetters())
    with pytest.raises(OSError):
        second.start(otlp_grpc.deliver)
    second.shutdown(1)
