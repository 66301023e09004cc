"""Dead letters: bad input is set aside with its reason, counted, and never stops the collector.

Both sinks return at once (`DeadLetterSink` in `collector.stages`). The Kafka sink writes on its
own thread and releases the caller's hold only once the broker has the letter; a letter it cannot
write keeps the hold, so the source offset stays uncommitted and nothing is lost. One exception: a
letter the topic refuses as too large (its `max.message.bytes` is below the letter) would be refused
on every retry and hold every later commit of its partition for good, so it is written again with its
payload cut to fit (headers kept, the original size in `ragpulse.truncated`), and if not even an empty
payload fits it is parked: counted, logged with its reason, and its hold released.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kafka.errors import MessageSizeTooLargeError, RecordListTooLargeError

from collector.exporters.kafka_writer import KafkaWriter, WriterFull
from collector.logs import RateLimitedLog
from collector.metrics import DEAD_LETTERS, DEAD_LETTERS_OVERSIZE, EXPORT_ERRORS
from collector.stages import DeadLetter

logger = logging.getLogger(__name__)

REASON_HEADER = "ragpulse.reason"
DETAIL_HEADER = "ragpulse.detail"
SOURCE_HEADER = "ragpulse.source"
TRUNCATED_HEADER = "ragpulse.truncated"  # the original payload's size in bytes, when it was cut
# Room for the key, the headers and the record batch's framing inside the producer's request limit.
_ENVELOPE_BYTES = 16 * 1024
# A letter the topic refused as too large is cut in half, again and again, down to this; then the
# headers alone are sent. The topic's limit is not known here (it is the broker's, per topic).
_SMALLEST_CUT = 1024


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

    @property
    def delivering(self) -> bool:
        return True


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
        self._send(letter, headers, min(len(letter.payload), self._max_payload), on_written)

    def _send(
        self, letter: DeadLetter, headers: list[tuple[str, bytes]], size: int, on_written: Callable[[], None]
    ) -> None:
        """Write `letter` with its payload cut to `size` bytes (the whole of it when it fits)."""
        if size < len(letter.payload):
            headers = [*headers, (TRUNCATED_HEADER, str(len(letter.payload)).encode())]

        def written() -> None:
            cut = f" (payload cut to {size} bytes)" if size < len(letter.payload) else ""
            _log(letter, f" -> {self.topic}{cut}")
            on_written()

        def failed(exc: BaseException) -> None:
            if isinstance(exc, MessageSizeTooLargeError | RecordListTooLargeError):
                self._refused_as_too_large(letter, headers, size, on_written)
            else:
                self._failed(exc)

        try:
            self._writer.send(self.topic, letter.payload[:size], letter.key, headers, written, failed)
        except WriterFull as exc:
            self._failed(exc)

    def _refused_as_too_large(
        self, letter: DeadLetter, headers: list[tuple[str, bytes]], size: int, on_written: Callable[[], None]
    ) -> None:
        smaller = size // 2 if size // 2 >= _SMALLEST_CUT else (0 if size > 0 else None)
        if smaller is not None:
            DEAD_LETTERS_OVERSIZE.labels("cut").inc()
            self._send(letter, [h for h in headers if h[0] != TRUNCATED_HEADER], smaller, on_written)
            return
        DEAD_LETTERS_OVERSIZE.labels("parked").inc()
        EXPORT_ERRORS.labels("dead_letters").inc()
        logger.error(
            "dead letter parked: %s refuses even its headers as too large (max.message.bytes); reason=%s "
            "source=%s bytes=%d key=%r; its record is acknowledged so commits go on",
            self.topic,
            letter.reason,
            letter.source,
            len(letter.payload),
            letter.key,
        )
        on_written()

    def _failed(self, exc: BaseException) -> None:
        EXPORT_ERRORS.labels("dead_letters").inc()
        self._failures.log(
            logger, exc, "dead letter not written to %s (%r); its record will be read again", self.topic, exc
        )

    @property
    def delivering(self) -> bool:
        return self._writer.delivering

    def close(self, timeout_s: float = 10.0) -> None:
        self._writer.close(timeout_s)
