"""A GenAI chat span whose messages travel as log records, made with the real OTel SDK.

This is how `opentelemetry-instrumentation-openai-v2` reports content when capture is on: the span
carries the operation, and each message is a log record (event) linked to it by trace and span id.
Receivers deliver spans and log records separately; the assembler joins them, so tests check the
join on assembled spans.
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import LogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter

from collector.assembly.assembler import TraceAssembler
from collector.spans import Span
from collector.stages import Received

QUESTION = "When was the Eiffel Tower completed?"
ANSWER = "It was completed in 1889."


def chat_with_message_logs(
    span_exporter: SpanExporter, log_exporter: LogRecordExporter, question: str = QUESTION
) -> tuple[str, str]:
    """Export one chat span and its user-message and choice log records, plus one log record with
    no trace context (emitted outside any span); returns the chat span's (trace id, span id) in hex."""
    resource = Resource.create({"service.name": "chat-app"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    logger = logger_provider.get_logger("opentelemetry.instrumentation.openai_v2")
    tracer = tracer_provider.get_tracer("opentelemetry.instrumentation.openai_v2")
    logger.emit(event_name="app.started", body="no trace context here")
    with tracer.start_as_current_span("chat gpt-4o-mini") as span:
        span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"})
        logger.emit(
            event_name="gen_ai.user.message",
            body={"content": question},
            attributes={"gen_ai.system": "openai"},
        )
        logger.emit(
            event_name="gen_ai.choice",
            body={"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}},
            attributes={"gen_ai.system": "openai"},
        )
        context = span.get_span_context()
    logger_provider.shutdown()
    tracer_provider.shutdown()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def assembled_spans(batches: Iterable[Received]) -> dict[str, Span]:
    """Run delivered batches through the real assembler and release their holds, as the pipeline
    does once a trace is done (so a Kafka receiver may commit); spans by span id."""
    assembler = TraceAssembler()
    for batch in batches:
        assembler.add(batch.spans, batch.ack, 0.0, batch.logs)
        batch.ack.release()  # the hand-over hold
    traces = assembler.drain()
    for trace in traces:
        trace.release()
    return {span.span_id: span for trace in traces for span in trace.spans}


def message_events(span: Span) -> list[tuple[str, object]]:
    return [(event.name, event.body) for event in span.events]
