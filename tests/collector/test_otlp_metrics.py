"""An app pointed at ragpulse for every signal (OpenLIT's `otlp_endpoint`, `OTEL_EXPORTER_OTLP_ENDPOINT`)
exports metrics too: the SDK's real OTLP metric exporters, over HTTP and gRPC, get success from a real
`ragpulse run`, and the data points they sent are counted as dropped on /metrics."""

from __future__ import annotations

import gzip

from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetricExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult, MetricsData

from testkit.otlp import post
from testkit.process import RagpulseProcess, free_port
from testkit.scrape import scrape

DROPPED = "ragpulse_otlp_metric_points_dropped_total"
REJECTED = "ragpulse_receiver_rejected_total"


def _app_metrics() -> MetricsData:
    """What an instrumented app's meter holds after a few calls: a counter with two attribute sets
    (two points) and a histogram (one point)."""
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("rag-app")
    tokens = meter.create_counter("gen_ai.client.token.usage.total")
    tokens.add(12, {"gen_ai.token.type": "input"})
    tokens.add(30, {"gen_ai.token.type": "output"})
    meter.create_histogram("gen_ai.client.operation.duration").record(0.42)
    data = reader.get_metrics_data()
    assert data is not None
    return data


def test_metrics_exported_to_ragpulse_are_answered_with_success_and_counted_as_dropped() -> None:
    grpc_port = free_port()
    with RagpulseProcess("--otlp-grpc-port", str(grpc_port)) as ragpulse:
        http = HttpMetricExporter(endpoint=f"http://127.0.0.1:{ragpulse.otlp_port}/v1/metrics")
        grpc = GrpcMetricExporter(endpoint=f"127.0.0.1:{grpc_port}", insecure=True)
        try:
            assert http.export(_app_metrics()) is MetricExportResult.SUCCESS
            assert grpc.export(_app_metrics()) is MetricExportResult.SUCCESS
        finally:
            http.shutdown()
            grpc.shutdown()
        status, _ = post(
            ragpulse.otlp_port, "/v1/metrics", b"not a metrics request", "application/x-protobuf"
        )
        gzipped, _ = post(ragpulse.otlp_port, "/v1/metrics", gzip.compress(b"{}"), "application/json", "gzip")
        metrics = scrape(ragpulse.metrics_port)
    assert metrics.value(DROPPED, receiver="otlp") == 3
    assert metrics.value(DROPPED, receiver="otlp_grpc") == 3
    assert (status, gzipped) == (
        400,
        200,
    )  # garbage is refused as the Collector does; an empty request is fine
    assert metrics.value(REJECTED, receiver="otlp", reason="bad_body") == 1
    assert metrics.value("ragpulse_traces_total") == 0  # nothing reached the pipeline
