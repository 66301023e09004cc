"""Logging that cannot flood: a bad input repeated at line rate must not become a log line per record."""

from __future__ import annotations

import logging
import time


class RateLimitedLog:
    """At most one line per `interval_s`; the next line says how many were suppressed meanwhile.

    The first failure of each kind is the useful one (it carries the trace id and exception type);
    a traceback is attached only at DEBUG level, so an operator sees one clear line by default.
    """

    def __init__(self, interval_s: float = 10.0) -> None:
        self.interval_s = interval_s
        self._last = -float("inf")
        self._suppressed = 0

    def log(self, logger: logging.Logger, exc: BaseException, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._last < self.interval_s:
            self._suppressed += 1
            return
        suffix = f" ({self._suppressed} more suppressed)" if self._suppressed else ""
        self._last, self._suppressed = now, 0
        logger.error(message + suffix, *args, exc_info=exc if logger.isEnabledFor(logging.DEBUG) else None)


class RateLimitFilter(logging.Filter):
    """For a library's logger that logs every retry of an outage (the OTel OTLP exporter logs each
    attempt): one record per `interval_s` passes, so the cause stays visible without a flood."""

    def __init__(self, interval_s: float = 30.0) -> None:
        super().__init__()
        self.interval_s = interval_s
        self._last = -float("inf")

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        if now - self._last < self.interval_s:
            return False
        self._last = now
        return True
