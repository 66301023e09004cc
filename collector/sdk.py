"""App side: instrument a RAG app for ragpulse without an OTel Collector in between.

- `KafkaSpanExporter` publishes finished spans to Kafka in the kafkaexporter's `otlp_proto`
  wire format, one record per trace keyed by hex trace id (`partition_traces_by_id`), so all
  spans of a trace land on one partition and one ragpulse replica.
- `record_rag` writes query, retrieved nodes and response on a span with ragpulse's own
  attributes, for apps that are not instrumented by OpenInference/OpenLLMetry/GenAI.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka import KafkaProducer
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Span

logger = logging.getLogger(__name__)

Node = str | Mapping[str, Any] | tuple[str, str, float | None]


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


def _node(node: Node, position: int) -> dict[str, Any]:
    if isinstance(node, str):
        return {"id": str(position), "content": node}
    if isinstance(node, tuple):
        node_id, content, score = node
        return {"id": node_id, "content": content, "score": score}
    content = node.get("content", node.get("text", node.get("page_content")))
    return {"id": str(node.get("id", position)), "content": content, "score": node.get("score")}


def record_rag(
    span: Span,
    query: str,
    nodes: Iterable[Node],
    response: str,
    *,
    model: str | None = None,
    route: str | None = None,
    expected_output: str | None = None,
    reference_contexts: Sequence[str] | None = None,
) -> None:
    """Record one RAG interaction on `span` with ragpulse's native attributes (`rag.*`).

    Nodes may be strings, `(id, text, score)` tuples or mappings with id/content(text)/score.
    """
    span.set_attribute("rag.query", query)
    span.set_attribute("rag.response", response)
    documents = [_node(n, i) for i, n in enumerate(nodes)]
    span.set_attribute("rag.retrieval.documents", json.dumps(documents, ensure_ascii=False))
    for key, value in (("rag.model", model), ("rag.route", route), ("rag.expected_output", expected_output)):
        if value is not None:
            span.set_attribute(key, value)
    if reference_contexts is not None:
        span.set_attribute("rag.reference_contexts", json.dumps(list(reference_contexts), ensure_ascii=False))
