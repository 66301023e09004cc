"""Evaluation results in the evaluated trace, so the tracing backend shows each score beside the answer.

One span per metric, child of the record's anchor span (the span that carried the response) and
linked to it, with the OTel GenAI evaluation attributes, and one `gen_ai.evaluation.result` log-based
event per metric parented to the same anchor span (`otel_logs`), both with the same attributes; they
also carry why (`ragpulse.evaluation.cause`, the verdicts as JSON) and what the judge spent. The
`gen_ai.evaluation.result` span event of earlier versions is off by default (`span_event`): OTEP 4430
(opentelemetry-specification `oteps/4430-span-event-api-deprecation-plan.md`) deprecates the Span
AddEvent API in favour of events emitted through the Logs API, and the GenAI conventions define this
event as a log-based one. With `hide_texts` no text leaves: the explanation is a count of the verdicts
and they carry no items nor reasons. The exporter has its own TracerProvider: the global one belongs
to whoever embeds ragpulse, and evaluation spans must be exported even when the app's own sampler
would drop them (they were already sampled by ragpulse), hence ALWAYS_ON. Spans and log records are
each held until their endpoint accepted them (`held_spans`, `held_logs`), so a flush confirms delivery
rather than an attempt.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import Literal

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AttributeValue
from pydantic import Field, model_validator

from collector import __version__
from collector.exporters import explanation, score_label
from collector.exporters.endpoints import HeldResults
from collector.exporters.held import HoldLimits
from collector.exporters.held_logs import EXPORTER as LOGS_EXPORTER
from collector.exporters.held_spans import HeldSpanProcessor
from collector.exporters.otel_logs import EVALUATION_EVENT, EvaluationLogEvents
from collector.exporters.verdicts import VerdictLimits, verdict_documents
from collector.logs import OneLineFilter
from collector.metrics import EXPORT_ERRORS
from collector.records import RagRecord
from collector.stages import Evaluation, Outcome

logger = logging.getLogger(__name__)
# The SDK exporter logs every attempt of an outage; `held_spans` says what it means for the offsets.
logging.getLogger("opentelemetry.exporter.otlp.proto.http.trace_exporter").addFilter(OneLineFilter(30.0))

ERROR_TYPE = "evaluation_error"  # the judge failed, after its retries (the one `error.type` ragpulse sets)


class OtelExportConfig(HeldResults):
    """Where the evaluation spans and log events go (`otel_export`). The results held are spans (about
    4.5 KB each, 7 KB with ten verdicts, at most 35 KB at the `verdicts` bounds) and log records, each
    held on its own to `max_queue_size`."""

    endpoint: str | None = Field(
        None, description="OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces; unset = disabled."
    )
    timeout_s: float = Field(10.0, gt=0, description="Per export request, retries included.")
    compression: Literal["none", "gzip"] = "none"
    max_export_batch_size: int = Field(512, ge=1, description="Spans per OTLP request.")
    log_events: bool = Field(
        True,
        description="Also send each result as a `gen_ai.evaluation.result` log-based event (OTLP logs), "
        "parented to the evaluated span; held and retried as the spans are. A backend without OTLP "
        "logs (Jaeger) needs false.",
    )
    logs_endpoint: str | None = Field(
        None,
        description="OTLP/HTTP logs URL; unset = `endpoint` with its /v1/traces replaced by /v1/logs.",
    )
    span_event: bool = Field(
        False,
        description="Also add the result as a `gen_ai.evaluation.result` span event on the evaluation "
        "span, as versions before the log events did; off by default: OpenTelemetry deprecates the span "
        "event API for log-based events (OTEP 4430).",
    )

    @model_validator(mode="after")
    def _logs_url_known(self) -> OtelExportConfig:
        if self.endpoint and self.log_events and self.logs_url is None:
            raise ValueError(
                "the endpoint does not end in /v1/traces, so where the log events go is unknown: set "
                "otel_export.logs_endpoint, or otel_export.log_events: false"
            )
        return self

    @property
    def logs_url(self) -> str | None:
        """Where the log events go: `logs_endpoint`, or `endpoint`'s /v1/traces as /v1/logs."""
        if self.logs_endpoint:
            return self.logs_endpoint
        base = (self.endpoint or "").rstrip("/")
        return base.removesuffix("/v1/traces") + "/v1/logs" if base.endswith("/v1/traces") else None


def evaluation_attributes(
    evaluation: Evaluation,
    max_explanation_chars: int,
    verdicts: VerdictLimits | None = None,
    hide_texts: bool = False,
) -> dict[str, AttributeValue]:
    """The attributes of the evaluation span and of its `gen_ai.evaluation.result` event (a log record,
    and the span event where `span_event` is on).

    The GenAI conventions (their `gen_ai.evaluation.result` event, `model/gen-ai/events.yaml`) require
    the name, the score and its label "if applicable" and `error.type` on an error, recommend the
    explanation, and `gen_ai.response.id` only "when available" to join an event that has no span to
    be parented to (ours always has one: the anchor span), and leave the label's
    values to the evaluator ("implementations SHOULD document the possible values"): ours are the
    outcome words Prometheus and the results topic use (passed, failed, error, unmeasured), so one
    query finds the same evaluations everywhere. The judge goes under `ragpulse.judge*`, not
    `gen_ai.request.model`: dashboards sum that attribute over the app's own model calls, and an
    evaluation span is not one of them. The verdicts travel as one JSON string
    (`collector.exporters.verdicts`).
    """
    attributes: dict[str, AttributeValue] = {
        "gen_ai.evaluation.name": evaluation.metric,
        "gen_ai.evaluation.score.label": score_label(evaluation.outcome),
        "gen_ai.evaluation.explanation": explanation(evaluation, hide_texts, max_explanation_chars),
        "ragpulse.evaluation.threshold": evaluation.threshold,
        "ragpulse.evaluation.lower_is_better": evaluation.lower_is_better,
        "ragpulse.judge": evaluation.judge,
        "ragpulse.judge.model": evaluation.judge_model,
        "ragpulse.judge.tokens": evaluation.tokens,
        "ragpulse.judge.cost_usd": evaluation.cost_usd,
        "ragpulse.version": __version__,
    }
    if evaluation.score is not None:
        attributes["gen_ai.evaluation.score.value"] = evaluation.score
    if evaluation.outcome is Outcome.ERROR:
        attributes["error.type"] = ERROR_TYPE
    if evaluation.cause:
        attributes["ragpulse.evaluation.cause"] = evaluation.cause
    if evaluation.verdicts:
        documents, left_out = verdict_documents(
            evaluation.verdicts, verdicts or VerdictLimits(), "otlp", hide_texts
        )
        attributes["ragpulse.evaluation.verdicts"] = json.dumps(documents, ensure_ascii=False)
        if left_out:
            attributes["ragpulse.evaluation.verdicts_truncated"] = left_out
    return attributes


class OtelSpanExporter:
    name = "otlp"

    def __init__(
        self, config: OtelExportConfig, verdicts: VerdictLimits | None = None, hide_texts: bool = False
    ) -> None:
        self.config = config
        self.verdict_limits, self.hide_texts = verdicts or VerdictLimits(), hide_texts
        self._provider: TracerProvider | None = None
        self._processor: HeldSpanProcessor | None = None
        self._events: EvaluationLogEvents | None = None
        if config.endpoint is None:
            return
        headers = config.revealed_headers()
        otlp = OTLPSpanExporter(
            endpoint=config.endpoint,
            headers=headers,
            timeout=config.timeout_s,
            compression=Compression.Gzip if config.compression == "gzip" else Compression.NoCompression,
        )
        resource = Resource.create({SERVICE_NAME: "ragpulse", SERVICE_VERSION: __version__})
        limits = HoldLimits.of(config, config.max_export_batch_size)  # the spans' and the log events' holds
        if config.log_events and config.logs_url:
            self._events = EvaluationLogEvents(
                config.logs_url,
                headers,
                config.timeout_s,
                config.compression == "gzip",
                limits,
                resource,
            )
        self._provider = TracerProvider(resource=resource, sampler=ALWAYS_ON)
        processor = HeldSpanProcessor(otlp, limits)
        self._provider.add_span_processor(processor)
        self._processor = processor
        self._tracer = self._provider.get_tracer("ragpulse", __version__)

    @property
    def enabled(self) -> bool:
        return self._provider is not None

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        if self._provider is None or not evaluations:
            return
        try:
            anchor = SpanContext(
                trace_id=int(record.trace_id, 16),
                span_id=int(record.anchor_span_id, 16),
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
        except ValueError:
            logger.warning(
                "no evaluation spans nor log events: bad trace/span id %r/%r",
                record.trace_id,
                record.anchor_span_id,
            )
            EXPORT_ERRORS.labels("otlp").inc(len(evaluations))
            if self._events is not None:
                EXPORT_ERRORS.labels(LOGS_EXPORTER).inc(len(evaluations))
            return
        parent = trace.set_span_in_context(NonRecordingSpan(anchor))
        end_ns = time.time_ns()
        extra = {
            key: value
            for key, value in (
                ("gen_ai.conversation.id", record.conversation_id),
                # The app's versions: this span's resource is ragpulse's own, so they go on the span.
                ("ragpulse.record.service_version", record.service_version),
                ("ragpulse.record.prompt_version", record.prompt_version),
            )
            if value
        }
        for evaluation in evaluations:
            self._export_one(evaluation, anchor, parent, end_ns, extra)

    def _export_one(
        self, evaluation: Evaluation, anchor: SpanContext, parent: Context, end_ns: int, extra: dict[str, str]
    ) -> None:
        attributes = {
            **evaluation_attributes(
                evaluation, self.config.max_explanation_chars, self.verdict_limits, self.hide_texts
            ),
            **extra,
        }
        span = self._tracer.start_span(
            f"evaluation {evaluation.metric}",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=[Link(anchor)],
            start_time=end_ns - int(max(evaluation.duration_s, 0.0) * 1e9),
        )
        if self.config.span_event:
            span.add_event(EVALUATION_EVENT, attributes=attributes, timestamp=end_ns)
        if self._events is not None:
            self._events.emit(parent, attributes, end_ns)
        if evaluation.outcome is Outcome.ERROR:
            span.set_status(Status(StatusCode.ERROR, str(attributes["gen_ai.evaluation.explanation"])))
        span.end(end_time=end_ns)

    @property
    def saturated(self) -> bool:
        spans = self._processor is not None and self._processor.saturated
        return spans or (self._events is not None and self._events.saturated)

    @property
    def delivering(self) -> bool:
        spans = self._processor is None or self._processor.delivering
        return spans and (self._events is None or self._events.delivering)

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        """True once the spans and the log events held when it began were all accepted (or given up):
        the two endpoints fail independently, so the log events are flushed even when the spans were
        not, within what is left of `timeout_s`."""
        if self._provider is None:
            return True
        deadline = time.monotonic() + timeout_s
        spans = self._provider.force_flush(int(timeout_s * 1000))
        events = self._events is None or self._events.force_flush(max(deadline - time.monotonic(), 0.0))
        return spans and events

    def shutdown(self) -> None:
        if self._provider is not None:
            self._provider.shutdown()
        if self._events is not None:
            self._events.shutdown()
