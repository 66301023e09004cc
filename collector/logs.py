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


class OneLineFilter(logging.Filter):
    """For chatty libraries (kafka-python logs a traceback for every dropped connection of a broker
    outage, the OTel OTLP exporter a line for every retry): drop the traceback unless DEBUG, and let
    each message template through once per `interval_s`, so an outage reads as a few clear lines.
    With `only`, records of other loggers pass untouched (for a filter on a handler, which sees all)."""

    def __init__(self, interval_s: float = 30.0, only: str = "") -> None:
        super().__init__()
        self.interval_s, self.only = interval_s, only
        self._last: dict[tuple[str, object], float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(self.only):
            return True
        now = time.monotonic()
        key = (record.name, record.msg)
        if now - self._last.get(key, -float("inf")) < self.interval_s:
            return False
        if len(self._last) > 1000:  # message templates are few; formatted messages are not: stay bounded
            self._last.clear()
        self._last[key] = now
        if not logging.getLogger().isEnabledFor(logging.DEBUG):
            record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def quiet_libraries(level: int) -> None:
    """kafka-python logs every metadata refresh at INFO and every broken connection at ERROR with a
    traceback: at WARNING unless ragpulse runs at DEBUG, one line per message template per 30 s.
    On the handlers, since a logger's filter does not see its children's records."""
    if level <= logging.DEBUG:  # everything, even after an earlier call in this process quietened it
        logging.getLogger("kafka").setLevel(logging.NOTSET)
        return
    logging.getLogger("kafka").setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        handler.addFilter(OneLineFilter(only="kafka"))
