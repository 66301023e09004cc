"""Dead letters: bad input is set aside with its reason, counted, and never stops the collector."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from kafka import KafkaProducer

from collector.metrics import DEAD_LETTERS

logger = logging.getLogger(__name__)

REASON_HEADER = "ragpulse.reason"
DETAIL_HEADER = "ragpulse.detail"
SOURCE_HEADER = "ragpulse.source"


def internal_error_detail(exc: BaseException) -> str:
    """The detail of an `internal_error` dead letter (an unexpected exception): type and message, bounded."""
    return f"{type(exc).__name__}: {exc}"[:300]


class DeadLetterSink(Protocol):
    def write(
        self, reason: str, detail: str, payload: bytes, key: bytes | None = None, source: str = ""
    ) -> None: ...

    def close(self) -> None: ...


class LogDeadLetters:
    """Embedded mode: no topic to write to, so count and log (without the payload)."""

    def write(
        self, reason: str, detail: str, payload: bytes, key: bytes | None = None, source: str = ""
    ) -> None:
        DEAD_LETTERS.labels(reason).inc()
        logger.warning(
            "dead letter: reason=%s source=%s bytes=%d detail=%s", reason, source, len(payload), detail
        )

    def close(self) -> None:
        pass


class KafkaDeadLetters:
    """Writes the original bytes to the dead-letter topic, the reason in a header."""

    def __init__(self, bootstrap_servers: str, topic: str, **options: Any) -> None:
        self.topic = topic
        self._producer = KafkaProducer(bootstrap_servers=bootstrap_servers, **options)

    def write(
        self, reason: str, detail: str, payload: bytes, key: bytes | None = None, source: str = ""
    ) -> None:
        DEAD_LETTERS.labels(reason).inc()
        headers = [
            (REASON_HEADER, reason.encode()),
            (DETAIL_HEADER, detail[:1000].encode("utf-8", "replace")),
            (SOURCE_HEADER, source.encode()),
        ]
        # Block until written: the record's offset is committed right after, so a lost dead
        # letter would be lost input.
        self._producer.send(self.topic, value=payload, key=key, headers=headers).get(timeout=30)
        logger.warning("dead letter -> %s: reason=%s source=%s detail=%s", self.topic, reason, source, detail)

    def close(self) -> None:
        self._producer.close(timeout=10)
