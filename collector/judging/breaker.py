"""A circuit breaker in front of the LLM judge: stop calling a failing endpoint for a while."""

from __future__ import annotations

import logging
import time

from collector.metrics import CIRCUIT_OPEN

logger = logging.getLogger(__name__)


class CircuitBreaker:
    """Opens after `failures` consecutive failed judge requests; half-opens after `cooldown_s`."""

    def __init__(self, failures: int = 5, cooldown_s: float = 30.0) -> None:
        self.failures, self.cooldown_s = failures, cooldown_s
        self._consecutive = 0
        self._opened_at: float | None = None

    @property
    def is_open(self) -> bool:
        """Open and still cooling down. Once the cooldown is over the breaker is half-open: the next
        record probes the judge, and /readyz says ready again without waiting for that record."""
        return self._opened_at is not None and time.monotonic() - self._opened_at < self.cooldown_s

    def allow(self, now: float) -> bool:
        if self._opened_at is None:
            return True
        if now - self._opened_at >= self.cooldown_s:  # half-open: let the next record probe the judge
            self._opened_at = None
            self._consecutive = self.failures - 1
            CIRCUIT_OPEN.set(0)
            return True
        return False

    def record(self, ok: bool, now: float) -> None:
        self._consecutive = 0 if ok else self._consecutive + 1
        if self._consecutive >= self.failures and self._opened_at is None:
            self._opened_at = now
            CIRCUIT_OPEN.set(1)
            logger.warning(
                "judge circuit breaker open for %.0fs after %d failures", self.cooldown_s, self.failures
            )
