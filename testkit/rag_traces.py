"""Realistic RAG traces made with the real OpenTelemetry SDK, one builder per convention.

Each builder records spans the way that convention's instrumentors do and returns the finished
SDK spans; `encode` turns them into the OTLP protobuf the kafkaexporter writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from collector.commands.demo_corpus import Topic
from ragpulse_sdk import record_rag


@dataclass
class RagCase:
    query: str = "When was the Eiffel Tower completed?"
    nodes: list[tuple[str, str, float]] = field(
        default_factory=lambda: [
            ("doc-1", "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. " * 5, 0.91),
            (
                "doc-2",
                "Gustave Eiffel's company designed and built the wrought-iron lattice tower. " * 5,
                0.84,
            ),
            ("doc-3", "The tower is 330 metres tall and was the tallest structure until 1930. " * 5, 0.77),
        ]
    )
    response: str = "The Eiffel Tower was completed in 1889."
    model: str = "gpt-4o-mini"
    route: str = "/ask"


class Collect(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def provider(exporter: SpanExporter, service: str = "rag-app") -> TracerProvider:
    """A provider for one trace or a few: not shut down at exit, which would keep it (and every span it
    exported) alive until then, when a benchmark or soak makes one per trace."""
    tracer_provider = TracerProvider(
        resource=Resource.create({"service.name": service}), shutdown_on_exit=False
    )
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider


def openinference(tp: TracerProvider, case: RagCase) -> None:
    tracer = tp.get_tracer("openinference.instrumentation.llama_index")
    with tracer.start_as_current_span("query") as chain:
        chain.set_attributes(
            {"openinference.span.kind": "CHAIN", "input.value": case.query, "http.route": case.route}
        )
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attributes({"openinference.span.kind": "RETRIEVER", "input.value": case.query})
            for i, (node_id, text, score) in enumerate(case.nodes):
                retriever.set_attributes(
                    {
                        f"retrieval.documents.{i}.document.id": node_id,
                        f"retrieval.documents.{i}.document.content": text,
                        f"retrieval.documents.{i}.document.score": score,
                    }
                )
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attributes(
                {
                    "openinference.span.kind": "LLM",
                    "llm.model_name": case.model,
                    "output.value": case.response,
                }
            )
        chain.set_attribute("output.value", case.response)


def genai(tp: TracerProvider, case: RagCase) -> None:
    tracer = tp.get_tracer("app")
    with tracer.start_as_current_span("POST /ask") as root:
        root.set_attribute("http.route", case.route)
        with tracer.start_as_current_span("retrieval vectordb") as retrieval:
            retrieval.set_attributes(
                {
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.retrieval.query.text": case.query,
                    "gen_ai.retrieval.documents": json.dumps(
                        [{"id": i, "score": s, "content": t} for i, t, s in case.nodes]
                    ),
                }
            )
        with tracer.start_as_current_span(f"chat {case.model}") as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": case.model,
                    "gen_ai.response.model": case.model + "-2024-07-18",
                    "gen_ai.input.messages": json.dumps(
                        [
                            {
                                "role": "system",
                                "parts": [{"type": "text", "content": "Answer from the context."}],
                            },
                            {"role": "user", "parts": [{"type": "text", "content": case.query}]},
                        ]
                    ),
                    "gen_ai.output.messages": json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [{"type": "text", "content": case.response}],
                                "finish_reason": "stop",
                            }
                        ]
                    ),
                }
            )


def openllmetry(tp: TracerProvider, case: RagCase) -> None:
    tracer = tp.get_tracer("opentelemetry.instrumentation.langchain")
    with tracer.start_as_current_span("rag_chain.workflow") as workflow:
        workflow.set_attributes(
            {
                "traceloop.span.kind": "workflow",
                "traceloop.entity.name": "rag_chain",
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"question": case.query}}),
                "http.route": case.route,
            }
        )
        with tracer.start_as_current_span("retriever.task") as retriever:
            retriever.set_attributes(
                {
                    "traceloop.span.kind": "task",
                    "traceloop.entity.name": "VectorStoreRetriever",
                    "traceloop.entity.input": json.dumps({"args": [case.query], "kwargs": {}}),
                    "traceloop.entity.output": json.dumps(
                        [{"page_content": t, "metadata": {"id": i}, "score": s} for i, t, s in case.nodes]
                    ),
                }
            )
        with tracer.start_as_current_span("openai.chat") as llm:
            llm.set_attributes(
                {
                    "gen_ai.request.model": case.model,
                    "gen_ai.prompt.0.role": "user",
                    "gen_ai.prompt.0.content": f"Context: ...\nQuestion: {case.query}",
                    "gen_ai.completion.0.role": "assistant",
                    "gen_ai.completion.0.content": case.response,
                }
            )
        workflow.set_attribute("traceloop.entity.output", json.dumps(case.response))


def native(tp: TracerProvider, case: RagCase) -> None:
    tracer = tp.get_tracer("app")
    with tracer.start_as_current_span("answer") as span:
        record_rag(span, case.query, case.nodes, case.response, model=case.model, route=case.route)


BUILDERS: dict[str, Callable[[TracerProvider, RagCase], None]] = {
    "openinference": openinference,
    "gen_ai": genai,
    "openllmetry": openllmetry,
    "ragpulse": native,
}


def make_spans(convention: str, case: RagCase | None = None, service: str = "rag-app") -> list[ReadableSpan]:
    collect = Collect()
    BUILDERS[convention](provider(collect, service), case or RagCase())
    return collect.spans


def encode(spans: Sequence[ReadableSpan]) -> bytes:
    return encode_spans(spans).SerializeToString()


def topic_attributes(topic: Topic, grounded: bool = True, route: str | None = None) -> dict[str, str]:
    """ragpulse's own span attributes for one answer to a demo topic: its grounded or its invented
    answer over the topic's passages (ids kb-0, kb-1, ...), as an app instrumented with them sends."""
    documents = [{"id": f"kb-{i}", "content": text, "score": 0.9} for i, text in enumerate(topic.passages)]
    attributes = {
        "rag.query": topic.question,
        "rag.response": topic.grounded if grounded else topic.invented,
        "rag.retrieval.documents": json.dumps(documents),
    }
    return {**attributes, "http.route": route} if route else attributes
