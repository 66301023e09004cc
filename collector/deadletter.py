"""Dead letters: bad input is set aside with its reason, counted, and never stops the collector.

Both sinks return at once (`DeadLetterSink` in `collector.stages`). The Kafka sink writes on its
own thread and releases the caller's hold only once the broker has the letter; a letter it cannot
write keeps the hold, so the source offset stays uncommitted and nothing is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from collector.kafka_writer import KafkaWriter, WriterFull
from collector.logs import RateLimitedLog
from collector.metrics import DEAD_LETTERS, EXPORT_ERRORS
from collector.stages import DeadLetter

logger = logging.getLogger(__name__)

REASON_HEADER = "ragpulse.reason"
DETAIL_HEADER = "ragpulse.detail"
SOURCE_HEADER = "ragpulse.source"
TRUNCATED_HEADER = "ragpulse.truncated"  # the original payload's size in bytes, when it was cut
# Room for the key, the headers and the record batch's framing inside the producer's request limit.
_ENVELOPE_BYTES = 16 * 1024


def _log(letter: DeadLetter, where: str) -> None:
    logger.warning(
        "dead letter%s: reason=%s source=%s bytes=%d detail=%s",
        where,
        letter.reason,
        letter.source,
        len(letter.payload),
        letter.detail,
    )


class LogDeadLetters:
    """Embedded mode: no topic to write to, so count and log (without the payload)."""

    def write(self, letter: DeadLetter, on_written: Callable[[], None]) -> None:
        DEAD_LETTERS.labels(letter.reason).inc()
        _log(letter, "")
        on_written()

    def close(self, timeout_s: float = 10.0) -> None:
        pass


class KafkaDeadLetters:
    """Writes the original bytes to the dead-letter topic, the reason and detail in headers."""

    def __init__(self, bootstrap_servers: str, topic: str, **options: Any) -> None:
        self.topic = topic
        self._writer = KafkaWriter(bootstrap_servers, "dead-letters", **options)
        # A letter over the producer's request limit could never be written, and its record's hold
        # would then block every later commit of the partition: such a payload is cut to fit.
        self._max_payload = int(options.get("max_request_size", 1024 * 1024)) - _ENVELOPE_BYTES
        self._failures = RateLimitedLog(interval_s=10.0)

    def write(self, letter: DeadLetter, on_written: Callable[[], None]) -> None:
        DEAD_LETTERS.labels(letter.reason).inc()
        headers = [
            (REASON_HEADER, letter.reason.encode()),
            (DETAIL_HEADER, letter.detail[:1000].encode("utf-8", "replace")),
            (SOURCE_HEADER, letter.source.encode()),
        ]
        payload = letter.payload
        if len(payload) > self._max_payload:
            headers.append((TRUNCATED_HEADER, str(len(payload)).encode()))
            payload = payload[: self._max_payload]

        def written() -> None:
            _log(letter, f" -> {self.topic}")
            on_written()

        try:
            self._writer.send(self.topic, payload, letter.key, headers, written, self._failed)
        except WriterFull as exc:
            self._failed(exc)

    def _failed(self, exc: BaseException) -> None:
        EXPORT_ERRORS.labels("dead_letters").inc()
        self._failures.log(
            logger, exc, "dead letter not written to %s (%r); its record will be read again", self.topic, exc
        )

    def close(self, timeout_s: float = 10.0) -> None:
        self._writer.close(timeout_s)
