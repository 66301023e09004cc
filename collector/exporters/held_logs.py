"""`HeldLogProcessor`: evaluation log events stay held until the OTLP logs endpoint accepted them (`held`).

The same hold as the evaluation spans' (`held_spans`): a flush is True only once every held record was
accepted or refused for good, so Kafka offsets wait for the log events too. One difference: a backend
that takes traces but no logs (Jaeger; a Collector without a logs pipeline) answers 404 for ever, and
retrying it would hold every commit for `retry_for_s` again and again. The SDK's exporter reports only
SUCCESS or FAILURE, so the session it is given (`StatusSession`, a public argument of the stock
exporter) remembers the last answer's status: a 4xx other than 408 and 429 is `Sent.REFUSED`, dropped
and counted at once with one line that names the setting to change.
"""

from __future__ import annotations

import logging
from typing import Any

import requests
from opentelemetry.sdk._logs import LogRecordProcessor, ReadableLogRecord, ReadWriteLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource

from collector.exporters.held import Held, HoldLimits, HoldsItems, Sent
from collector.logs import RateLimitedLog

logger = logging.getLogger(__name__)

EXPORTER = "otlp_logs"  # the `exporter` label of ragpulse_export_errors_total for these records
_RETRYABLE_4XX = frozenset({408, 429})


class StatusSession(requests.Session):
    """A requests session that remembers the HTTP status of its last answer (None: no answer)."""

    last_status: int | None = None

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:
        self.last_status = None
        response = super().request(*args, **kwargs)
        self.last_status = response.status_code
        return response


class HeldLogProcessor(HoldsItems, LogRecordProcessor):
    def __init__(self, exporter: LogRecordExporter, session: StatusSession, limits: HoldLimits) -> None:
        self._exporter, self._session = exporter, session
        self._refused_log = RateLimitedLog(interval_s=30.0)
        self._held: Held[ReadableLogRecord] = Held(
            self._send,
            limits,
            exporter=EXPORTER,
            what="evaluation log events",
            where="the OTLP logs endpoint",
            config="otel_export",
        )

    def _send(self, batch: list[ReadableLogRecord]) -> Sent:
        if self._exporter.export(batch) is LogRecordExportResult.SUCCESS:
            return Sent.ACCEPTED
        status = self._session.last_status
        if status is not None and 400 <= status < 500 and status not in _RETRYABLE_4XX:
            self._refused_log.log(
                logger,
                ConnectionRefusedError(),
                "the OTLP logs endpoint refused %d evaluation log events (HTTP %d): dropped and counted; "
                "a backend without OTLP logs needs otel_export.log_events: false (or set "
                "otel_export.logs_endpoint)",
                len(batch),
                status,
            )
            return Sent.REFUSED
        return Sent.RETRY

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        self._held.add(
            ReadableLogRecord(
                log_record=log_record.log_record,
                resource=log_record.resource if log_record.resource is not None else Resource.create({}),
                instrumentation_scope=log_record.instrumentation_scope,
                limits=log_record.limits,
            )
        )

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._held.flush(timeout_millis / 1000)

    def shutdown(self) -> None:
        self.force_flush()
        self._exporter.shutdown()
