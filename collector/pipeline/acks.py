"""`AckFlusher`: an evaluated record's acknowledgement is released only once every exporter has
confirmed it delivered the record's evaluations, so a crash or an outage never commits an offset
whose scores were not sent. An exporter that does not confirm (its broker or endpoint is down or
slow) keeps every hold for the next round; flushes are bounded by our own timeout, since the OTel
SDK's may outlive its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from collector.logs import RateLimitedLog
from collector.stages import EvaluationExporter

logger = logging.getLogger(__name__)


class AckFlusher:
    def __init__(self, exporters: Sequence[EvaluationExporter], timeout_s: float) -> None:
        self.exporters, self.timeout_s = exporters, timeout_s
        self._waiting: list[Callable[[], None]] = []  # the releases of records' acks
        self._flushing: dict[int, asyncio.Future[bool]] = {}
        self._unconfirmed_log = RateLimitedLog(interval_s=30.0)
        self._error_log = RateLimitedLog(interval_s=10.0)

    def add(self, release: Callable[[], None]) -> None:
        """A record whose evaluations were handed to every exporter (or that was skipped)."""
        self._waiting.append(release)

    async def run(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            await self.flush()

    async def flush(self) -> bool:
        """Flush every exporter; release the waiting acks when all confirmed. True when released."""
        if not self._waiting:
            return True
        releases, self._waiting = self._waiting, []
        # All at once: each flush is a round trip to its own backend, and in turn they added up to
        # seconds under load, seconds of work a crash then repeats (the uncommitted window).
        confirmed = await asyncio.gather(*(self._flush_one(exporter) for exporter in self.exporters))
        if all(confirmed):
            for release in releases:
                release()
            return True
        self._waiting = releases + self._waiting
        unconfirmed = [type(e).__name__ for e, ok in zip(self.exporters, confirmed, strict=True) if not ok]
        self._unconfirmed_log.log(
            logger,
            TimeoutError(),
            "%s did not confirm delivery; %d records keep their offsets until it does",
            ", ".join(unconfirmed),
            len(self._waiting),
        )
        return False

    async def _flush_one(self, exporter: EvaluationExporter) -> bool:
        """One bounded flush, in a thread; a flush still running from an earlier round is not started
        twice, and counts as unconfirmed."""
        running = self._flushing.get(id(exporter))
        if running is not None and not running.done():
            return False
        task = asyncio.ensure_future(asyncio.to_thread(exporter.force_flush, self.timeout_s))
        self._flushing[id(exporter)] = task
        try:
            return bool(await asyncio.wait_for(asyncio.shield(task), self.timeout_s + 1.0))
        except TimeoutError:
            return False
        except Exception as exc:
            self._error_log.log(logger, exc, "exporter %s failed to flush (%s)", type(exporter).__name__, exc)
            return False
