"""`KafkaSpanExporter`: publish finished spans to Kafka without an OTel Collector in between.

It writes the kafkaexporter's `otlp_proto` wire format, one record per trace keyed by the hex
trace id (`partition_traces_by_id`), so all spans of a trace land on one partition and one
ragpulse replica.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from kafka import KafkaProducer
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

logger = logging.getLogger(__name__)


class KafkaSpanExporter(SpanExporter):
    """An OTel SDK `SpanExporter` writing `otlp_proto` records to Kafka (use with BatchSpanProcessor)."""

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        topic: str = "otlp_spans",
        timeout_s: float = 10.0,
        **producer_options: Any,
    ) -> None:
        self.topic = topic
        self._timeout_s = timeout_s
        self._producer = KafkaProducer(bootstrap_servers=bootstrap_servers, **producer_options)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        by_trace: dict[int, list[ReadableSpan]] = defaultdict(list)
        for span in spans:
            by_trace[span.context.trace_id].append(span)
        try:
            futures = [
                self._producer.send(
                    self.topic, key=f"{trace_id:032x}".encode(), value=encode_spans(group).SerializeToString()
                )
                for trace_id, group in by_trace.items()
            ]
            for future in futures:
                future.get(timeout=self._timeout_s)
        except Exception as exc:  # the SDK contract: report failure, never raise into the app
            logger.warning("KafkaSpanExporter: export of %d spans failed: %s", len(spans), exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._producer.flush(timeout=timeout_millis / 1000)
        return True

    def shutdown(self) -> None:
        self._producer.close(timeout=self._timeout_s)
