"""OTLP metrics sent to ragpulse are answered with success and dropped, counted.

Instrumentations' own docs point all three signals at one endpoint (OpenLIT's `otlp_endpoint`, an SDK's
`OTEL_EXPORTER_OTLP_ENDPOINT`): refused with 404 or UNIMPLEMENTED, `/v1/metrics` fills the app's log
with export errors every interval. ragpulse evaluates traces and logs only, so metrics are decoded (a
body that is not OTLP metrics is still refused, as the Collector does), their data points counted in
`ragpulse_otlp_metric_points_dropped_total{receiver}`, and the export answered as the spec says.
"""

from __future__ import annotations

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2

from collector.metrics import OTLP_METRIC_POINTS_DROPPED
from collector.receivers.decode import Encoding, decode_message, decompress

METRICS_SERVICE = metrics_service_pb2.DESCRIPTOR.services_by_name["MetricsService"].full_name
_POINT_KINDS = ("gauge", "sum", "histogram", "exponential_histogram", "summary")


def count_from_zero(receiver: str) -> None:
    """The receiver's series exists from the start, so `increase()` sees its first points."""
    OTLP_METRIC_POINTS_DROPPED.labels(receiver)


def drop_metrics(
    receiver: str, body: bytes, encoding: Encoding, max_bytes: int, content_encoding: str | None = None
) -> metrics_service_pb2.ExportMetricsServiceResponse:
    """Decode, count the data points as dropped, and answer success; raises `DecodeError` for a body
    that is not an OTLP metrics request."""
    payload = decompress(body, content_encoding, max_bytes)
    request = decode_message(payload, metrics_pb2.MetricsData, encoding, max_bytes)
    OTLP_METRIC_POINTS_DROPPED.labels(receiver).inc(data_points(request))
    return metrics_service_pb2.ExportMetricsServiceResponse()


def data_points(request: metrics_pb2.MetricsData) -> int:
    """Data points of every kind in the request (what a metrics backend would have stored)."""
    total = 0
    for resource in request.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                kind = metric.WhichOneof("data")
                if kind in _POINT_KINDS:
                    total += len(getattr(metric, kind).data_points)
    return total
