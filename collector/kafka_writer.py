"""`KafkaWriter`: a Kafka producer whose every blocking call runs on its own thread.

kafka-python's `send` is asynchronous only while the producer has metadata and buffer space;
with a stalled broker it blocks its caller for up to `max_block_ms` (60 s by default), and
`future.get` blocks until the broker answers. The dead-letter sink and the results exporter hand
their records to this writer instead, which returns at once: a bounded queue, one thread that
sends, and callbacks (run on the writer's or the producer's I/O thread) for what happened. A full
queue is reported to the caller at once, never waited out. A retriable failure (the broker gone,
a timeout) is sent again, with backoff, for up to `retry_for_s`: until then the record stays
pending, so `flush` says False and nothing that depends on it is acknowledged. This is the one
place where Kafka writes meet threads.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka import KafkaProducer

logger = logging.getLogger(__name__)

OnSent = Callable[[], None]
OnFailed = Callable[[BaseException], None]


class WriterFull(Exception):
    """The writer's queue is full (the broker is not keeping up, or not answering)."""


@dataclass(slots=True)
class _Message:
    topic: str
    value: bytes
    key: bytes | None
    headers: list[tuple[str, bytes]]
    on_sent: OnSent | None
    on_failed: OnFailed | None
    queued_at: float = 0.0
    attempts: int = 0


class KafkaWriter:
    def __init__(
        self,
        bootstrap_servers: str,
        name: str,
        max_queued: int = 10_000,
        retry_for_s: float = 300.0,
        **producer_options: Any,
    ) -> None:
        """Connects at once: an unreachable broker raises here (a clear error at start)."""
        self._retry_for_s = retry_for_s
        self._closing = threading.Event()
        self._producer = KafkaProducer(bootstrap_servers=bootstrap_servers, **producer_options)
        self._queue: queue.Queue[_Message | None] = queue.Queue(maxsize=max_queued)
        self._pending = 0  # queued or sent but not yet answered
        self._idle = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"kafka-writer-{name}", daemon=True)
        self._thread.start()

    def send(
        self,
        topic: str,
        value: bytes,
        key: bytes | None = None,
        headers: list[tuple[str, bytes]] | None = None,
        on_sent: OnSent | None = None,
        on_failed: OnFailed | None = None,
    ) -> None:
        """Queue one record; returns at once. Raises `WriterFull` (nothing queued) when full or closed."""
        if self._closed:
            raise WriterFull("the writer is closed")
        with self._idle:
            self._pending += 1
        try:
            message = _Message(topic, value, key, headers or [], on_sent, on_failed, time.monotonic())
            self._queue.put_nowait(message)
        except queue.Full:
            self._done()
            raise WriterFull(f"{self._queue.maxsize} records already waiting for the broker") from None

    def _run(self) -> None:
        while (message := self._queue.get()) is not None:
            if message.attempts and self._closing.wait(min(0.2 * 2 ** (message.attempts - 1), 5.0)):
                self._answer(message, WriterFull("the writer closed before the broker took the record"))
                continue
            try:
                future = self._producer.send(
                    message.topic, value=message.value, key=message.key, headers=message.headers
                )
            except Exception as exc:  # no metadata within max_block_ms, buffer full, closed...
                self._answer(message, exc)
                continue
            future.add_callback(lambda _meta, m=message: self._answer(m, None))
            future.add_errback(lambda exc, m=message: self._answer(m, exc))

    def _answer(self, message: _Message, error: BaseException | None) -> None:
        if error is not None and self._retry(message, error):
            return
        try:
            if error is None and message.on_sent is not None:
                message.on_sent()
            elif error is not None and message.on_failed is not None:
                message.on_failed(error)
        except Exception:  # a callback's bug must not kill the writer's or the producer's thread
            logger.exception("a Kafka writer callback failed")
        finally:
            self._done()

    def _retry(self, message: _Message, error: BaseException) -> bool:
        """Queue `message` again when `error` may pass (still pending); False when it failed for good."""
        retriable = bool(getattr(error, "retriable", False))
        if (
            not retriable
            or self._closing.is_set()
            or time.monotonic() - message.queued_at > self._retry_for_s
        ):
            return False
        message.attempts += 1
        try:
            self._queue.put_nowait(message)
        except queue.Full:
            return False
        if message.attempts == 1:
            logger.warning("Kafka write failed (%r); retrying for up to %.0fs", error, self._retry_for_s)
        return True

    def _done(self) -> None:
        with self._idle:
            self._pending -= 1
            if self._pending == 0:
                self._idle.notify_all()

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every queued record was answered by the broker; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._idle:
            while self._pending > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(min(remaining, 0.5))
        return True

    @property
    def pending(self) -> int:
        return self._pending

    def close(self, timeout_s: float = 10.0) -> None:
        """Send what is queued within `timeout_s`, then close the producer (what is left is failed)."""
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + timeout_s
        self.flush(timeout_s)
        self._closing.set()  # what is still failing fails for good now
        with contextlib.suppress(queue.Full):  # else the thread is stuck on a stalled broker (a daemon)
            self._queue.put_nowait(None)
        self._thread.join(max(0.0, deadline - time.monotonic()))
        self._producer.close(timeout=max(0.0, deadline - time.monotonic()))
