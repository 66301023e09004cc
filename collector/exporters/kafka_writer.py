"""`KafkaWriter`: a Kafka producer whose every blocking call runs on its own thread, and which is
rebuilt when it stops answering.

kafka-python's `send` is asynchronous only while the producer has metadata and buffer space;
with a stalled broker it blocks its caller for up to `max_block_ms` (60 s by default), and
`future.get` blocks until the broker answers. The dead-letter sink and the results exporter hand
their records to this writer instead, which returns at once: a bounded queue, one thread that
sends, and callbacks (run on the writer's or the producer's I/O thread) for what happened. A full
queue is reported to the caller at once, never waited out. A retriable failure (the broker gone,
a timeout) is sent again, with backoff, for up to `retry_for_s`: until then the record stays
pending, so `flush` says False and nothing that depends on it is acknowledged.

kafka-python promises an answer for every record within `delivery_timeout_ms`, but after a broker
outage longer than that its idempotent producer can lose its producer id and loop without ever
answering again (kafka-python 3.0: the sender waits for an id it never asks for). So idempotence is
off unless the options turn it on (duplicates are the consumers' to handle either way: results are
keyed by trace and metric), and a watchdog on the writer's thread treats a record unanswered for
`delivery_timeout_ms` plus a grace as a stall: it counts it, closes the producer, builds a new one and
resends every record the old one had not confirmed. This is the one place where Kafka writes meet
threads.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka import KafkaProducer

from collector.metrics import KAFKA_PRODUCER_REBUILDS
from collector.stages import UNDELIVERED_AFTER_S

logger = logging.getLogger(__name__)

OnSent = Callable[[], None]
OnFailed = Callable[[BaseException], None]

STALL_GRACE_S = 30.0  # beyond delivery_timeout_ms: an unanswered record means the producer is stuck
_WATCH_S = 1.0  # how often the writer's thread looks for a stall while nothing is queued
_REBUILD_BACKOFF_S = 10.0  # after a failed rebuild (the broker still unreachable)


class WriterFull(Exception):
    """The writer's queue is full (the broker is not keeping up, or not answering)."""


@dataclass(slots=True, eq=False)
class _Message:
    topic: str
    value: bytes
    key: bytes | None
    headers: list[tuple[str, bytes]]
    on_sent: OnSent | None
    on_failed: OnFailed | None
    queued_at: float = 0.0
    attempts: int = 0
    sent_at: float = 0.0  # when it was last handed to the producer
    generation: int = -1  # the producer it was handed to; answers from an older one are stale


class KafkaWriter:
    def __init__(
        self,
        bootstrap_servers: str,
        name: str,
        max_queued: int = 10_000,
        retry_for_s: float = 300.0,
        stall_after_s: float | None = None,
        **producer_options: Any,
    ) -> None:
        """Connects at once: an unreachable broker raises here (a clear error at start).
        `stall_after_s`: how long a record may stay unanswered before the producer is rebuilt;
        `delivery_timeout_ms` plus `STALL_GRACE_S` unless given."""
        self.name = name
        self._retry_for_s = retry_for_s
        self._options = {"enable_idempotence": False, **producer_options}
        delivery_timeout_s = float(self._options.get("delivery_timeout_ms", 120_000)) / 1000
        self._stall_after_s = stall_after_s or delivery_timeout_s + STALL_GRACE_S
        self._closing = threading.Event()
        self._producer = KafkaProducer(bootstrap_servers=bootstrap_servers, **self._options)
        self._bootstrap_servers = bootstrap_servers
        self._generation = 0
        self._next_watch = 0.0  # the watchdog's next look: a scan of what is in flight, not per record
        self._queue: queue.Queue[_Message | None] = queue.Queue(maxsize=max_queued)
        self._pending: dict[int, _Message] = {}  # queued or sent, not yet answered for good
        self._in_flight: dict[int, _Message] = {}  # handed to the current producer, not yet answered
        self._retries: list[tuple[float, int, _Message]] = []  # (due, sequence, message): a heap
        self._sequence = itertools.count()
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
        message = _Message(topic, value, key, headers or [], on_sent, on_failed, time.monotonic())
        with self._idle:
            self._pending[id(message)] = message
        try:
            self._queue.put_nowait(message)
        except queue.Full:
            self._done(message)
            raise WriterFull(f"{self._queue.maxsize} records already waiting for the broker") from None

    def _run(self) -> None:
        while True:
            with self._idle:
                wait_s = min([_WATCH_S] + [due - time.monotonic() for due, _, _ in self._retries[:1]])
            try:
                message = self._queue.get(timeout=max(wait_s, 0.0))
                if message is None:  # close()
                    break
            except queue.Empty:
                message = None  # a retry or the watchdog is due
            self._watch()
            self._send_due_retries()
            if message is not None:
                self._hand_over(message)
        with self._idle:
            left, self._retries = [m for _, _, m in self._retries], []
        for message in left:
            self._answer(message, WriterFull("the writer closed before the broker took the record"))

    def _send_due_retries(self) -> None:
        """Retries wait out their backoff in a heap, not on this thread: one record's backoff must not
        delay the hundreds behind it (after an outage every pending record is a retry)."""
        now = time.monotonic()
        while True:
            with self._idle:
                if not self._retries or self._retries[0][0] > now:
                    return
                _, _, message = heapq.heappop(self._retries)
            self._hand_over(message)

    def _hand_over(self, message: _Message) -> None:
        """Give `message` to the current producer; its answer comes back on the producer's I/O thread."""
        generation = self._generation
        message.sent_at, message.generation = time.monotonic(), generation
        with self._idle:
            self._in_flight[id(message)] = message
        try:
            future = self._producer.send(
                message.topic, value=message.value, key=message.key, headers=message.headers
            )
        except Exception as exc:  # no metadata within max_block_ms, buffer full, closed...
            self._answer(message, exc, generation)
            return
        future.add_callback(lambda _meta, m=message, g=generation: self._answer(m, None, g))
        future.add_errback(lambda exc, m=message, g=generation: self._answer(m, exc, g))

    def _answer(self, message: _Message, error: BaseException | None, generation: int | None = None) -> None:
        if generation is not None:
            with self._idle:
                if message.generation != generation or self._in_flight.pop(id(message), None) is None:
                    return  # a replaced producer answering late: the record was resent, this is stale
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
            self._done(message)

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
        due = time.monotonic() + min(0.2 * 2 ** (message.attempts - 1), 5.0)
        with self._idle:
            heapq.heappush(self._retries, (due, next(self._sequence), message))
        if message.attempts == 1:
            logger.warning("Kafka write failed (%r); retrying for up to %.0fs", error, self._retry_for_s)
        return True

    def _watch(self) -> None:
        """On the writer's thread: a record the producer has held past its own deadline means the
        producer is stuck; replace it."""
        now = time.monotonic()
        if self._closing.is_set() or now < self._next_watch:
            return
        self._next_watch = now + _WATCH_S
        with self._idle:
            stuck = sum(1 for m in self._in_flight.values() if now - m.sent_at > self._stall_after_s)
        if stuck:
            self._rebuild(stuck)

    def _rebuild(self, stuck: int) -> None:
        KAFKA_PRODUCER_REBUILDS.labels(self.name).inc()
        logger.warning(
            "Kafka producer (%s) stalled: %d records unanswered for over %.0fs (delivery_timeout_ms + "
            "grace); building a new producer and resending what was not confirmed",
            self.name,
            stuck,
            self._stall_after_s,
        )
        try:
            producer = KafkaProducer(bootstrap_servers=self._bootstrap_servers, **self._options)
        except Exception as exc:  # the broker still unreachable: the records stay pending, try again
            logger.warning("no new Kafka producer (%r); retrying in %.0fs", exc, _REBUILD_BACKOFF_S)
            self._next_watch = time.monotonic() + _REBUILD_BACKOFF_S
            return
        old, self._producer = self._producer, producer
        with self._idle:
            self._generation += 1
            unconfirmed = sorted(self._in_flight.values(), key=lambda m: m.sent_at)
            self._in_flight.clear()
        closing = threading.Thread(target=close_producer, args=(old, 0.0), name="kafka-close", daemon=True)
        closing.start()
        for message in unconfirmed:
            self._hand_over(message)

    def _done(self, message: _Message) -> None:
        with self._idle:
            self._pending.pop(id(message), None)
            self._idle.notify_all()  # a flush waits for the records it owes, not for an empty writer

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every record queued before this call was answered by the broker; False on
        timeout. Records sent meanwhile are not waited for: under a steady stream something is always
        pending, and a flush that waited for none would never confirm, holding every commit."""
        deadline = time.monotonic() + timeout_s
        with self._idle:
            owed = list(self._pending.values())
            while owed:
                owed = [m for m in owed if self._pending.get(id(m)) is m]
                if not owed:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(min(remaining, 0.5))
        return True

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def delivering(self) -> bool:
        """False while a record has waited for the broker longer than `UNDELIVERED_AFTER_S`: /readyz
        says that this writer cannot deliver (an outage, a stall, a topic that refuses it)."""
        now = time.monotonic()
        with self._idle:
            return all(now - m.queued_at <= UNDELIVERED_AFTER_S for m in self._pending.values())

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
        close_producer(self._producer, max(0.0, deadline - time.monotonic()))


def close_producer(producer: KafkaProducer, timeout_s: float) -> None:
    """Close `producer`, even one whose records will never complete. kafka-python's `close` flushes
    first and raises `KafkaTimeoutError` when that flush times out, before it force-closes its I/O
    thread; that part is done here, so shutdown ends without a traceback and no thread is left."""
    try:
        producer.close(timeout=timeout_s)
    except Exception as exc:
        logger.warning("Kafka producer closed with records unanswered (%r)", exc)
        sender = getattr(producer, "_sender", None)
        if sender is not None and sender.is_alive():
            sender.force_close()
