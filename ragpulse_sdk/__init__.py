"""ragpulse on the app side: what an instrumented RAG app imports, and nothing of the sidecar.

    from ragpulse_sdk import KafkaSpanExporter, record_rag

- `record_rag(span, query, nodes, response)` states one RAG interaction on a span with
  ragpulse's own attributes (`ragpulse_sdk.attributes`), for apps without OpenInference,
  OpenLLMetry or OTel GenAI instrumentation.
- `record_feedback(span, value, answer=...)` states a user's thumbs or score on an answer, matched by
  the sidecar with the judge's verdicts on it.
- `KafkaSpanExporter` is an OTel SDK `SpanExporter` writing the OTel Collector kafkaexporter's
  `otlp_proto` records (one per trace, keyed by trace id), for apps without a Collector.
"""

from ragpulse_sdk.kafka_exporter import KafkaSpanExporter
from ragpulse_sdk.record import record_feedback, record_rag

__all__ = ["KafkaSpanExporter", "record_feedback", "record_rag"]
