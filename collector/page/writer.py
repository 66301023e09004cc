"""The one thread that writes the page's store, behind a bounded queue.

The exporter (on the event loop) and the results-topic reader (its own thread) both hand batches
here and never wait for SQLite. The thread writes whatever has queued up in one transaction, keeps
the store within its bounds, and answers flush requests once everything before them is written.
A row SQLite refuses is counted and logged (one line, rate-limited), never raised.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence

from collector.logs import RateLimitedLog
from collector.page.metrics import STORE_DROPPED
from collector.page.store import Store, StoredEvaluation
from collector.review.corrections import Correction

logger = logging.getLogger(__name__)

_BOUNDS_EVERY_S = 1.0
_MAX_BATCHES_PER_TRANSACTION = 200


class _Flush:
    def __init__(self) -> None:
        self.done = threading.Event()


class _Stop:
    pass


_Item = list[StoredEvaluation | Correction] | _Flush | _Stop


class StoreWriter:
    def __init__(
        self, store: Store, max_queued: int = 10_000, on_corrected: Callable[[], None] | None = None
    ) -> None:
        """`on_corrected`: called on this thread after reviewers' corrections are written (the refit)."""
        self.store, self.max_queued, self.on_corrected = store, max_queued, on_corrected
        self._queue: queue.Queue[_Item] = queue.Queue(maxsize=max_queued)
        self._refused = RateLimitedLog(interval_s=30.0)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="ragpulse-page-store", daemon=True)
        self._thread.start()

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def submit(self, batch: Sequence[StoredEvaluation | Correction]) -> bool:
        """Queue `batch` without waiting; False (and counted) when the queue is full."""
        if self._closed or not batch:
            return not batch
        try:
            self._queue.put_nowait(list(batch))
            return True
        except queue.Full:
            STORE_DROPPED.labels("queue_full").inc(len(batch))
            return False

    def submit_waiting(self, batch: Sequence[StoredEvaluation | Correction], stop: threading.Event) -> bool:
        """Queue `batch`, waiting for room until `stop` is set (a reader that can wait, unlike the
        pipeline: what it reads stays on the topic)."""
        while not self._closed and not stop.is_set():
            try:
                self._queue.put(list(batch), timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def flush(self, timeout_s: float = 10.0) -> bool:
        """True once everything queued before this call is written (or refused and counted)."""
        if not self._thread.is_alive():
            return self._queue.empty()
        marker = _Flush()
        try:
            self._queue.put(marker, timeout=timeout_s)
        except queue.Full:
            return False
        return marker.done.wait(timeout_s)

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued (up to `timeout_s`), then stop the thread and close the store."""
        if self._closed:
            return
        self._closed = True
        try:
            self._queue.put(_Stop(), timeout=timeout_s)
        except queue.Full:
            logger.warning("the page's store writer did not drain in %.0fs", timeout_s)
        self._thread.join(timeout_s)
        if not self._thread.is_alive():
            self.store.close()

    def _run(self) -> None:
        last_bounds = 0.0
        while True:
            try:
                first = self._queue.get(timeout=_BOUNDS_EVERY_S)
            except queue.Empty:
                first = None
            items = [] if first is None else [first]
            while items and len(items) < _MAX_BATCHES_PER_TRANSACTION and not isinstance(items[-1], _Stop):
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            rows = [row for item in items if isinstance(item, list) for row in item]
            self._write([row for row in rows if isinstance(row, StoredEvaluation)])
            self._correct([row for row in rows if isinstance(row, Correction)])
            if rows or time.monotonic() - last_bounds >= _BOUNDS_EVERY_S:  # the cap holds after each write
                last_bounds = time.monotonic()
                self._enforce_bounds()
            for item in items:
                if isinstance(item, _Flush):
                    item.done.set()
            if items and isinstance(items[-1], _Stop):
                return

    def _write(self, rows: list[StoredEvaluation]) -> None:
        if not rows:
            return
        try:
            refused = self.store.write(rows)
        except Exception as failure:  # a bug or a broken database: count it, keep the thread (and the page)
            refused = [(row, failure) for row in rows]
        for row, error in refused:
            STORE_DROPPED.labels("write_error").inc()
            self._refused.log(
                logger,
                error,
                "the page's store refused trace=%s metric=%s: %r",
                getattr(row, "trace_id", "?"),
                getattr(row, "metric", "?"),
                error,
            )

    def _correct(self, corrections: list[Correction]) -> None:
        if not corrections:
            return
        try:
            self.store.write_corrections(corrections)
            if self.on_corrected is not None:
                self.on_corrected()
        except Exception as exc:  # count it, keep the thread (and the page)
            STORE_DROPPED.labels("write_error").inc(len(corrections))
            self._refused.log(
                logger, exc, "the page's store refused %d corrections: %r", len(corrections), exc
            )

    def _enforce_bounds(self) -> None:
        try:
            self.store.enforce_bounds()
        except Exception as exc:
            self._refused.log(logger, exc, "the page's store could not delete old evaluations: %r", exc)
