"""`gen_ai.evaluation.result` as a log-based event: the form OpenTelemetry now asks events to take.

The GenAI semantic conventions (open-telemetry/semantic-conventions-genai, `model/gen-ai/events.yaml`)
define `gen_ai.evaluation.result` as an event, that is a log record with an event name, which "SHOULD be
parented to GenAI operation span being evaluated": the record carries the evaluated span's trace and
span id (the record's anchor span), so a backend that joins logs to traces shows it beside the answer.
The conventions set no severity for this event; it is INFO, an ordinary result (an evaluation error
says so in `error.type` and the score label). The attributes are the evaluation span's own
(`otel_spans.evaluation_attributes`): one place builds them. No body: the conventions put everything
in attributes.

The LoggerProvider is ragpulse's own, with ragpulse's resource, for the reason the TracerProvider is:
the global one belongs to whoever embeds ragpulse. Records are held until the endpoint accepted them
(`held_logs`), so a flush, and with it a Kafka commit, confirms delivery.
"""

from __future__ import annotations

import logging

from opentelemetry._logs import SeverityNumber
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.util.types import AttributeValue

from collector import __version__
from collector.exporters.held import HoldLimits, HoldsItems
from collector.exporters.held_logs import HeldLogProcessor, StatusSession
from collector.logs import OneLineFilter

# The SDK exporter logs every attempt of an outage; `held_logs` says what it means for the offsets.
logging.getLogger("opentelemetry.exporter.otlp.proto.http._log_exporter").addFilter(OneLineFilter(30.0))

EVALUATION_EVENT = "gen_ai.evaluation.result"


class EvaluationLogEvents(HoldsItems):
    """Emits one `gen_ai.evaluation.result` log record per evaluation to an OTLP/HTTP logs endpoint."""

    def __init__(
        self,
        endpoint: str,
        headers: dict[str, str],
        timeout_s: float,
        gzip: bool,
        limits: HoldLimits,
        resource: Resource,
    ) -> None:
        session = StatusSession()
        otlp = OTLPLogExporter(
            endpoint=endpoint,
            headers=headers,
            timeout=timeout_s,
            compression=Compression.Gzip if gzip else Compression.NoCompression,
            session=session,
        )
        self._held: HeldLogProcessor = HeldLogProcessor(otlp, session, limits)
        self._provider = LoggerProvider(resource=resource)
        self._provider.add_log_record_processor(self._held)
        self._logger = self._provider.get_logger("ragpulse", __version__)

    def emit(self, evaluated_span: Context, attributes: dict[str, AttributeValue], timestamp_ns: int) -> None:
        """One event, in the trace of `evaluated_span` (a context holding the evaluated span)."""
        self._logger.emit(
            timestamp=timestamp_ns,
            observed_timestamp=timestamp_ns,
            context=evaluated_span,
            severity_number=SeverityNumber.INFO,
            severity_text="INFO",
            event_name=EVALUATION_EVENT,
            attributes=attributes,
        )

    def force_flush(self, timeout_s: float) -> bool:
        return self._held.force_flush(int(timeout_s * 1000))

    def shutdown(self) -> None:
        self._provider.shutdown()
