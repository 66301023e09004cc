"""`HeldSpanProcessor`: evaluation spans stay held until the OTLP endpoint accepted them (`held`).

The SDK's span exporter retries within one call and then reports a failure; every failure is worth
another flush, so each counts as `Sent.RETRY`.
"""

from __future__ import annotations

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from collector.exporters.held import Held, HoldLimits, HoldsItems, Sent


class HeldSpanProcessor(HoldsItems, SpanProcessor):
    def __init__(self, exporter: SpanExporter, limits: HoldLimits) -> None:
        self._exporter = exporter
        self._held: Held[ReadableSpan] = Held(
            self._send,
            limits,
            exporter="otlp",
            what="evaluation spans",
            where="the OTLP endpoint",
            config="otel_export",
        )

    def _send(self, batch: list[ReadableSpan]) -> Sent:
        return Sent.ACCEPTED if self._exporter.export(batch) is SpanExportResult.SUCCESS else Sent.RETRY

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        self._held.add(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._held.flush(timeout_millis / 1000)

    def shutdown(self) -> None:
        self.force_flush()
        self._exporter.shutdown()
