"""`Held`: what an exporter sends stays held until its endpoint accepted it.

The OTel SDK's BatchSpanProcessor drops a batch its exporter failed to send and reports the flush as
done all the same (its `force_flush` also ignores its timeout), so ragpulse committed Kafka offsets for
scores that never reached the tracing backend. Here a flush is True only once every held item was
accepted, or refused for good (a request the endpoint will never take, counted); a batch that failed
stays held and is sent again on the next flush, until `retry_for_s` after the first failure in a row,
when everything held is given up and counted. Flushes are driven by the pipeline's `AckFlusher` (every
`evaluation.flush_interval_s` while records wait, each on a thread of its own), which bounds how long it
waits; one flush runs at a time. Evaluation spans (`held_spans`), evaluation log events (`held_logs`)
and Phoenix annotations (`phoenix`) are sent this way.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from itertools import islice
from typing import Any, Generic, TypeVar

from collector.exporters.endpoints import HeldResults
from collector.logs import RateLimitedLog
from collector.metrics import EXPORT_ERRORS
from collector.stages import UNDELIVERED_AFTER_S

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Sent(Enum):
    ACCEPTED = "accepted"
    RETRY = "retry"  # the endpoint is down, slow or overloaded: held and sent again
    REFUSED = "refused"  # the endpoint will never take it (a 400): dropped and counted at once


@dataclass(frozen=True, slots=True)
class HoldLimits:
    """How much a hold keeps and for how long: at most `max_held` items, sent `batch_size` at a time, and
    given up `retry_for_s` after the first failure in a row, as measured by `clock` (tests pass a fake).
    One value, read from an endpoint's settings once (`of`), that every layer down to `Held` hands on
    unchanged."""

    max_held: int
    batch_size: int
    retry_for_s: float
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def of(cls, config: HeldResults, batch_size: int) -> HoldLimits:
        """The limits of `config`'s endpoint; its batch size is named by each destination (see
        `HeldResults`)."""
        return cls(config.max_queue_size, batch_size, config.retry_for_s)


class Held(Generic[T]):
    """A bounded hold of items and the flush that sends them in batches, in order.

    `send(batch)` says what became of one batch (it is called by one flush at a time, never raises
    through: an exception counts as RETRY). `exporter` labels `ragpulse_export_errors_total`; `what`
    and `where` name the items and the endpoint in log lines, `config` the setting prefix.
    """

    def __init__(
        self,
        send: Callable[[list[T]], Sent],
        limits: HoldLimits,
        exporter: str,
        what: str,
        where: str,
        config: str,
    ) -> None:
        self._send, self._clock = send, limits.clock
        self.limits = limits
        self.exporter, self.what, self.where, self.config = exporter, what, where, config
        self._held: deque[T] = deque()
        self._held_lock = threading.Lock()
        self._flush_lock = threading.Lock()  # one flush at a time: a batch is never sent twice at once
        self._failing_since: float | None = None
        self._full_log = RateLimitedLog(interval_s=30.0)
        self._failure_log = RateLimitedLog(interval_s=30.0)

    def add(self, item: T) -> bool:
        """Hold `item` until a flush sends it; False (dropped and counted) when the hold is full."""
        with self._held_lock:
            full = len(self._held) >= self.limits.max_held
            if not full:
                self._held.append(item)
        if full:
            EXPORT_ERRORS.labels(self.exporter).inc()
            self._full_log.log(
                logger,
                OverflowError(),
                "%d %s already wait for %s (%s.max_queue_size); dropping one",
                self.limits.max_held,
                self.what,
                self.where,
                self.config,
            )
        return not full

    @property
    def held(self) -> int:
        return len(self._held)

    @property
    def delivering(self) -> bool:
        """False once its endpoint has failed for `UNDELIVERED_AFTER_S` in a row."""
        since = self._failing_since
        return since is None or self._clock() - since < UNDELIVERED_AFTER_S

    @property
    def saturated(self) -> bool:
        """Nine tenths full: the pipeline stops evaluating until the endpoint takes items again."""
        return len(self._held) >= self.limits.max_held * 0.9

    def flush(self, timeout_s: float) -> bool:
        """Send what was held when the flush began; True once it is all gone (sent, refused, or given
        up after `retry_for_s`). Items added meanwhile wait for the next flush: under a steady stream
        the hold is never empty, and a flush that waited for it to be would never confirm anything,
        holding every commit until the stream stops."""
        deadline = self._clock() + timeout_s
        if not self._flush_lock.acquire(timeout=max(timeout_s, 0.0)):
            return False
        try:
            with self._held_lock:
                owed = len(self._held)
            while owed > 0:
                with self._held_lock:
                    batch = list(islice(self._held, min(self.limits.batch_size, owed)))
                if not batch:
                    return True
                sent = self._sent(batch)
                if sent is Sent.RETRY:
                    return self._give_up_if_failing_too_long()
                with self._held_lock:
                    for _ in batch:
                        self._held.popleft()
                if sent is Sent.REFUSED:
                    EXPORT_ERRORS.labels(self.exporter).inc(len(batch))
                owed -= len(batch)
                if owed > 0 and self._clock() > deadline:
                    return False
            return True
        finally:
            self._flush_lock.release()

    def _sent(self, batch: list[T]) -> Sent:
        try:
            sent = self._send(batch)
        except Exception as exc:  # a bug in a sender must not stop the flusher; the items stay held
            self._failure_log.log(
                logger, exc, "sending %d %s to %s failed (%r)", len(batch), self.what, self.where, exc
            )
            sent = Sent.RETRY
        if sent is Sent.RETRY:
            if self._failing_since is None:
                self._failing_since = self._clock()
        else:
            self._failing_since = None
        return sent

    def _give_up_if_failing_too_long(self) -> bool:
        assert self._failing_since is not None
        failing_for = self._clock() - self._failing_since
        if failing_for < self.limits.retry_for_s:
            self._failure_log.log(
                logger,
                ConnectionError(),
                "%s has not accepted %s for %.0fs; %d held, retrying",
                self.where,
                self.what,
                failing_for,
                self.held,
            )
            return False
        with self._held_lock:
            given_up = len(self._held)
            self._held.clear()
        self._failing_since = None
        EXPORT_ERRORS.labels(self.exporter).inc(given_up)
        logger.error(
            "gave up on %d %s: %s failed for %.0fs (%s.retry_for_s)",
            given_up,
            self.what,
            self.where,
            failing_for,
            self.config,
        )
        return True


class HoldsItems:
    """What a component built on `Held` reports of it: how much it holds, whether it is nine tenths full
    (evaluation waits) and whether it still delivers (/readyz)."""

    _held: Held[Any] | HoldsItems  # the hold itself, or a component that owns one

    @property
    def held(self) -> int:
        return self._held.held

    @property
    def saturated(self) -> bool:
        return self._held.saturated

    @property
    def delivering(self) -> bool:
        return self._held.delivering
