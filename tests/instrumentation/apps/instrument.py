"""OpenTelemetry setup of the conformance apps, as their docs tell a user to write it.

A TracerProvider with the stock OTLP exporter (http/protobuf or gRPC) behind a BatchSpanProcessor, a
LoggerProvider with the OTLP log exporter for the instrumentation that emits its content as log
records, and exactly one instrumentation family switched on. `--capture` adds a second, in-memory
processor whose spans and log records are encoded with the exporters' own encoders and written as
OTLP JSON: the fixtures ragpulse's extraction is unit-tested against.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry._logs import set_logger_provider
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    InMemoryLogRecordExporter,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

# `builtin`: the framework's own OpenTelemetry instrumentation (Pydantic AI's `Agent.instrument_all()`,
# LiteLLM's `otel` callback).
INSTRUMENTATIONS = (
    "openinference",
    "openllmetry",
    "otel-genai-events",
    "otel-genai-span",
    "builtin",
    "openlit",
)
# The instrumentations that put content in OTLP log records: the app exports logs too.
_LOGGING = ("otel-genai-events", "openlit")

# What a user sets for each mode of the official GenAI instrumentation (openai-v2 2.4b0 reads them when
# it instruments): the legacy conventions with content as log records, or the latest experimental
# conventions with `gen_ai.input.messages` / `gen_ai.output.messages` on the span.
_ENVIRONMENT: dict[str, dict[str, str]] = {
    "openllmetry": {"TRACELOOP_TRACE_CONTENT": "true"},
    "otel-genai-events": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    "otel-genai-span": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
    },
}
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")

# The instrumentors a user of each family switches on. OpenLLMetry's framework instrumentors rely on its
# OpenAI instrumentor for the model calls (`Traceloop.init()` turns on both; the LlamaIndex one skips
# llama-index's OpenAI LLM class on purpose, the LangChain one suppresses the duplicate chat span).
_OI, _TL = "openinference.instrumentation", "opentelemetry.instrumentation"
_TRACELOOP_OPENAI = f"{_TL}.openai:OpenAIInstrumentor"
_INSTRUMENTORS: dict[tuple[str, str], list[str]] = {
    ("llamaindex", "openinference"): [f"{_OI}.llama_index:LlamaIndexInstrumentor"],
    ("langchain", "openinference"): [f"{_OI}.langchain:LangChainInstrumentor"],
    ("haystack", "openinference"): [f"{_OI}.haystack:HaystackInstrumentor"],
    ("openai", "openinference"): [f"{_OI}.openai:OpenAIInstrumentor"],
    ("openai-images", "openinference"): [f"{_OI}.openai:OpenAIInstrumentor"],
    ("llamaindex-citations", "openinference"): [f"{_OI}.llama_index:LlamaIndexInstrumentor"],
    ("llamaindex-conversation", "openinference"): [f"{_OI}.llama_index:LlamaIndexInstrumentor"],
    ("llamaindex", "openllmetry"): [f"{_TL}.llamaindex:LlamaIndexInstrumentor", _TRACELOOP_OPENAI],
    ("langchain", "openllmetry"): [f"{_TL}.langchain:LangchainInstrumentor", _TRACELOOP_OPENAI],
    ("langchain-conversation", "openllmetry"): [f"{_TL}.langchain:LangchainInstrumentor", _TRACELOOP_OPENAI],
    ("openai", "openllmetry"): [_TRACELOOP_OPENAI],
    ("openai", "otel-genai-events"): [f"{_TL}.openai_v2:OpenAIInstrumentor"],
    ("openai", "otel-genai-span"): [f"{_TL}.openai_v2:OpenAIInstrumentor"],
    ("openai-conversation", "otel-genai-span"): [f"{_TL}.openai_v2:OpenAIInstrumentor"],
    ("pydantic-ai", "builtin"): [],  # the app turns it on: Agent.instrument_all()
    ("langgraph", "openinference"): [f"{_OI}.langchain:LangChainInstrumentor"],
    ("llamaindex-agent", "openinference"): [f"{_OI}.llama_index:LlamaIndexInstrumentor"],
    ("dspy", "openinference"): [f"{_OI}.dspy:DSPyInstrumentor"],
    ("litellm", "openinference"): [f"{_OI}.litellm:LiteLLMInstrumentor"],
    ("litellm", "builtin"): ["tests.instrumentation.apps.litellm_sdk:OtelCallback"],  # callbacks=["otel"]
    ("openai", "openlit"): ["tests.instrumentation.apps.openlit_init:OpenLIT"],
    ("openai-stream", "openlit"): ["tests.instrumentation.apps.openlit_init:OpenLIT"],
}


@dataclass
class Telemetry:
    tracer_provider: TracerProvider
    logger_provider: LoggerProvider | None
    captured_spans: InMemorySpanExporter | None = None
    captured_logs: InMemoryLogRecordExporter | None = None

    def shutdown(self, capture: Path | None) -> None:
        """Flush and stop every provider; then write the captured OTLP JSON if asked."""
        self.tracer_provider.force_flush()
        if self.logger_provider is not None:
            self.logger_provider.force_flush()
        if capture is not None:
            capture.mkdir(parents=True, exist_ok=True)
            spans = self.captured_spans.get_finished_spans() if self.captured_spans else ()
            logs = self.captured_logs.get_finished_logs() if self.captured_logs else ()
            _write_json(capture / "traces.json", encode_spans(spans) if spans else None)
            _write_json(capture / "logs.json", encode_logs(logs) if logs else None)
        self.tracer_provider.shutdown()
        if self.logger_provider is not None:
            self.logger_provider.shutdown()


def setup(
    *, app: str, instrumentation: str, service_name: str, endpoint: str, protocol: str, capture: bool
) -> Telemetry:
    for key, value in _ENVIRONMENT.get(instrumentation, {}).items():
        os.environ[key] = value
    resource = Resource.create({"service.name": service_name})
    tracer_provider = TracerProvider(resource=resource)
    export = endpoint != "none"  # "none": capture only, for refreshing the fixtures without a collector
    if export:
        tracer_provider.add_span_processor(BatchSpanProcessor(_span_exporter(endpoint, protocol)))
    trace.set_tracer_provider(tracer_provider)
    telemetry = Telemetry(tracer_provider, None)
    if capture:
        telemetry.captured_spans = InMemorySpanExporter()
        tracer_provider.add_span_processor(SimpleSpanProcessor(telemetry.captured_spans))
    if instrumentation in _LOGGING:
        logger_provider = LoggerProvider(resource=resource)
        if export:
            logger_provider.add_log_record_processor(
                BatchLogRecordProcessor(_log_exporter(endpoint, protocol))
            )
        if capture:
            telemetry.captured_logs = InMemoryLogRecordExporter()
            logger_provider.add_log_record_processor(SimpleLogRecordProcessor(telemetry.captured_logs))
        set_logger_provider(logger_provider)
        telemetry.logger_provider = logger_provider
    kwargs: dict[str, Any] = {"tracer_provider": tracer_provider}
    if telemetry.logger_provider is not None:
        kwargs["logger_provider"] = telemetry.logger_provider
    for instrumentor in _instrumentors(app, instrumentation):
        instrumentor().instrument(**kwargs)
    return telemetry


def _instrumentors(app: str, instrumentation: str) -> list[Any]:
    """The instrumentor classes of one (app, instrumentation) pair, imported only when chosen."""
    paths = _INSTRUMENTORS.get((app, instrumentation))
    if paths is None:
        raise SystemExit(f"no {instrumentation} instrumentation for the {app} app")
    classes = []
    for path in paths:
        module, name = path.split(":")
        classes.append(getattr(importlib.import_module(module), name))
    return classes


def _span_exporter(endpoint: str, protocol: str) -> Any:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans

        return GrpcSpans(endpoint=endpoint, insecure=True)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces")


def _log_exporter(endpoint: str, protocol: str) -> Any:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs

        return GrpcLogs(endpoint=endpoint, insecure=True)
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

    return OTLPLogExporter(endpoint=f"{endpoint.rstrip('/')}/v1/logs")


def _write_json(path: Path, message: Any) -> None:
    """Protobuf JSON mapping as OTLP/JSON requires it: hex trace and span ids, enums as integers."""
    document = _hex_ids(MessageToDict(message, use_integers_for_enums=True)) if message is not None else {}
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_FIELDS and isinstance(v, str) else _hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node
