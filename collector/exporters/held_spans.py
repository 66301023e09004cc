"""`HeldSpanProcessor`: evaluation spans stay held until the OTLP endpoint accepted them.

The SDK's BatchSpanProcessor drops a batch its exporter failed to send and reports the flush as done
all the same (its `force_flush` also ignores its timeout), so ragpulse committed Kafka offsets for
scores that never reached the tracing backend. Here a flush is True only once every held span was
accepted; a batch that failed stays held and is sent again on the next flush, until `retry_for_s`
after the first failure in a row, when everything held is given up and counted. Flushes are driven
by the pipeline's `AckFlusher` (every `evaluation.flush_interval_s` while records wait), which bounds
how long it waits; one flush runs at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from itertools import islice

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from collector.logs import RateLimitedLog
from collector.metrics import EXPORT_ERRORS

logger = logging.getLogger(__name__)


class HeldSpanProcessor(SpanProcessor):
    def __init__(
        self,
        exporter: SpanExporter,
        max_held: int,
        batch_size: int,
        retry_for_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._exporter, self._clock = exporter, clock
        self.max_held, self.batch_size, self.retry_for_s = max_held, batch_size, retry_for_s
        self._held: deque[ReadableSpan] = deque()
        self._held_lock = threading.Lock()
        self._flush_lock = threading.Lock()  # one flush at a time: a batch is never sent twice at once
        self._failing_since: float | None = None
        self._full_log = RateLimitedLog(interval_s=30.0)
        self._failure_log = RateLimitedLog(interval_s=30.0)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        with self._held_lock:
            full = len(self._held) >= self.max_held
            if not full:
                self._held.append(span)
        if full:
            EXPORT_ERRORS.labels("otlp").inc()
            self._full_log.log(
                logger,
                OverflowError(),
                "%d evaluation spans already wait for the OTLP endpoint (otel_export.max_queue_size); "
                "dropping one",
                self.max_held,
            )

    @property
    def held(self) -> int:
        return len(self._held)

    @property
    def saturated(self) -> bool:
        """Nine tenths full: the pipeline stops evaluating until the endpoint takes spans again."""
        return len(self._held) >= self.max_held * 0.9

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Send everything held; True when nothing is left (sent, or given up after `retry_for_s`)."""
        deadline = self._clock() + timeout_millis / 1000
        if not self._flush_lock.acquire(timeout=max(timeout_millis / 1000, 0.0)):
            return False
        try:
            while True:
                with self._held_lock:
                    batch = list(islice(self._held, self.batch_size))
                if not batch:
                    return True
                if not self._sent(batch):
                    return self._give_up_if_failing_too_long()
                with self._held_lock:
                    for _ in batch:
                        self._held.popleft()
                if self._clock() > deadline:
                    return False
        finally:
            self._flush_lock.release()

    def _sent(self, batch: list[ReadableSpan]) -> bool:
        try:
            result = self._exporter.export(batch)
        except Exception as exc:  # an exporter bug must not stop the flusher; the spans stay held
            self._failure_log.log(
                logger, exc, "OTLP export of %d evaluation spans failed (%r)", len(batch), exc
            )
            result = SpanExportResult.FAILURE
        if result is SpanExportResult.SUCCESS:
            self._failing_since = None
            return True
        if self._failing_since is None:
            self._failing_since = self._clock()
        return False

    def _give_up_if_failing_too_long(self) -> bool:
        assert self._failing_since is not None
        failing_for = self._clock() - self._failing_since
        if failing_for < self.retry_for_s:
            self._failure_log.log(
                logger,
                ConnectionError(),
                "the OTLP endpoint has not accepted evaluation spans for %.0fs; %d held, retrying",
                failing_for,
                self.held,
            )
            return False
        with self._held_lock:
            given_up = len(self._held)
            self._held.clear()
        self._failing_since = None
        EXPORT_ERRORS.labels("otlp").inc(given_up)
        logger.error(
            "gave up on %d evaluation spans: the OTLP endpoint failed for %.0fs (otel_export.retry_for_s)",
            given_up,
            failing_for,
        )
        return True

    def shutdown(self) -> None:
        self.force_flush()
        self._exporter.shutdown()
