"""Forwarding: every OTLP request the embedded receivers accepted goes on to the user's tracing backend.

In the sidecar layout the app exports only to ragpulse; without this its traces would end here. The
bytes go on as received (protobuf or JSON, compressed or not) to an OTLP/HTTP endpoint, so ragpulse
adds no re-encoding and the backend sees exactly what the app sent. Forwarding must never slow or
break evaluation: `forward` only enqueues, one thread sends, and the queue is bounded in bytes, so a
dead upstream costs at most `max_queue_bytes`; what does not fit, or is not delivered within
`retry_for_s`, is dropped and counted in `ragpulse_forwarded_total`. Retries follow the OTLP/HTTP spec:
429, 502, 503, 504 and connection errors are retried (honouring Retry-After), other errors are not.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
from pydantic import Field, field_validator

from collector import __version__
from collector.exporters.endpoints import HttpDestination, base_url
from collector.logs import RateLimitedLog
from collector.metrics import FORWARDED
from collector.receivers.decode import Signal
from evaluators.redaction import without_credentials

if TYPE_CHECKING:
    from collector.stages import Deliver

logger = logging.getLogger(__name__)

_RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
# Worth another try: the connection failed or timed out. Other exceptions (a header httpx refuses,
# a bug) would fail the same way again.
_RETRYABLE_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_FIRST_BACKOFF_S, _MAX_BACKOFF_S = 0.5, 10.0
_THREAD = "otlp-forward"
# httpx logs every request at INFO: a line per forwarded request would bury the log (the judge's own
# requests, on other threads, are left as they are).
logging.getLogger("httpx").addFilter(lambda record: record.threadName != _THREAD)


class ForwardConfig(HttpDestination):
    """Where the embedded receivers forward what they accepted (`otlp.forward`); no endpoint = nowhere."""

    endpoint: str | None = Field(
        None,
        description="Base URL of an OTLP/HTTP receiver, e.g. http://otel-collector:4318 (requests go to "
        "/v1/traces and /v1/logs under it); unset = not forwarded.",
    )
    retry_for_s: float = Field(
        120.0, ge=0, description="How long one request is retried (429/502/503/504, connection errors)."
    )
    max_queue_bytes: int = Field(
        64 * 1024 * 1024, ge=1, description="Requests waiting to be sent; beyond it new ones are dropped."
    )

    @field_validator("endpoint")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        hint = "give the base URL: /v1/traces and /v1/logs are added to it"
        return base_url(value, ("/v1/traces", "/v1/logs"), hint)


@dataclass(frozen=True, slots=True)
class _Request:
    signal: Signal
    body: bytes
    content_type: str
    content_encoding: str | None


class _Failure(Exception):
    """What `RateLimitedLog` prints: one line, never a traceback nor a header value."""


class OtlpForwarder:
    """A bounded queue of requests and the one daemon thread that sends them, in order.

    It takes part in the receivers' lifecycle (`collector.stages.Receiver`): listed after them, it is
    started with them, checked for /healthz, and shut down after them, so what they accepted last
    is still sent.
    """

    name = "otlp_forward"

    def __init__(self, config: ForwardConfig) -> None:
        if config.endpoint is None:
            raise ValueError("otlp.forward.endpoint is not set")
        self.config, self._endpoint = config, config.endpoint
        self._shown = without_credentials(config.endpoint)
        self._queue: deque[_Request] = deque()
        self._queued_bytes = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False  # shutdown began: nothing new is queued, what is queued is still sent
        self._abandoned = threading.Event()  # shutdown's time is up: what is left is dropped
        # one per cause, so a full queue does not hide that the upstream refuses or is down
        self._full_log, self._dropped_log, self._rejected_log = (RateLimitedLog(10.0) for _ in range(3))

    @property
    def queued_bytes(self) -> int:
        return self._queued_bytes

    @property
    def ready(self) -> bool:
        """Always: an unreachable upstream must not stop ragpulse from taking traces."""
        return True

    @property
    def alive(self) -> bool:
        """False only when the sending thread died while it should run: /healthz then restarts ragpulse."""
        return self._thread is None or self._thread.is_alive() or self._closing

    def start(self, deliver: Deliver | None = None) -> None:
        """Start sending; `deliver` is unused (the receivers' signature: this forwards, not delivers)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=_THREAD, daemon=True)
            self._thread.start()
            logger.info("forwarding accepted OTLP requests to %s", self._shown)

    def stop(self) -> None:
        """Nothing to do: the receivers stop taking requests, what they accepted still goes on."""

    def forward(self, signal: Signal, body: bytes, content_type: str, content_encoding: str | None) -> None:
        """Queue one request as received; never blocks nor raises (what does not fit is dropped)."""
        try:
            request = _Request(signal, body, content_type, content_encoding)
            with self._cond:
                full = self._queued_bytes + len(body) > self.config.max_queue_bytes
                if not full and not self._closing:
                    self._queue.append(request)
                    self._queued_bytes += len(body)
                    self._cond.notify()
                    return
                FORWARDED.labels(signal, "dropped").inc()
            reason = f"queue full ({self.config.max_queue_bytes} bytes)" if full else "shutting down"
            self._failed(self._full_log, request, "dropped", reason)
        except Exception as exc:
            self._dropped_log.log(logger, _Failure(), "%s request not forwarded (%r)", signal, exc)

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Send what is queued within `timeout_s`, then count the rest as dropped."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)
        with self._cond:
            self._abandoned.set()  # ends a retry wait; a request in flight is not counted twice
            left = list(self._queue)
            self._queue.clear()
            self._queued_bytes = 0
            for request in left:
                FORWARDED.labels(request.signal, "dropped").inc()
        if left:
            logger.warning("%d OTLP requests not forwarded within %g s of shutdown", len(left), timeout_s)

    def _run(self) -> None:
        headers = self.config.revealed_headers()
        headers.setdefault("User-Agent", f"ragpulse/{__version__}")
        with httpx.Client(timeout=self.config.timeout_s, headers=headers) as client:
            while True:
                with self._cond:
                    self._cond.wait_for(lambda: self._queue or self._closing)
                    if not self._queue or self._abandoned.is_set():
                        return
                    request = self._queue[0]  # stays counted in the bound while it is sent
                outcome = self._send(client, request)
                with self._cond:
                    if self._abandoned.is_set():
                        return  # shutdown counted it
                    self._queue.popleft()
                    self._queued_bytes -= len(request.body)
                    FORWARDED.labels(request.signal, outcome).inc()

    def _send(self, client: httpx.Client, request: _Request) -> str:
        """`sent`, `rejected` (a non-retryable answer) or `dropped` (retries over, or shutdown's time up)."""
        headers = {"Content-Type": request.content_type}
        if request.content_encoding:
            headers["Content-Encoding"] = request.content_encoding
        url = f"{self._endpoint}/v1/{request.signal}"
        give_up_at, backoff = time.monotonic() + self.config.retry_for_s, _FIRST_BACKOFF_S
        while True:
            wait = backoff
            try:
                response = client.post(url, content=request.body, headers=headers)
            except _RETRYABLE_ERRORS as exc:
                failure = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # its message may quote a header value: the type only
                return self._failed(
                    self._dropped_log, request, "dropped", f"{type(exc).__name__}, not retried"
                )
            else:
                if response.is_success:
                    return "sent"
                failure = f"HTTP {response.status_code}"
                if response.status_code not in _RETRYABLE_STATUS:
                    return self._failed(self._rejected_log, request, "rejected", failure)
                wait = _retry_after(response) or backoff
            if time.monotonic() + wait > give_up_at:
                reason = f"{failure} for retry_for_s ({self.config.retry_for_s:g} s)"
                return self._failed(self._dropped_log, request, "dropped", reason)
            if self._abandoned.wait(wait):
                return "dropped"  # shutdown's time is up: it counts and logs what is left
            backoff = min(backoff * 2, _MAX_BACKOFF_S)

    def _failed(self, log: RateLimitedLog, request: _Request, outcome: str, reason: str) -> str:
        log.log(logger, _Failure(reason), "%s to %s %s: %s", request.signal, self._shown, outcome, reason)
        return outcome


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds (the form OTLP receivers send); an HTTP date is ignored."""
    value = response.headers.get("retry-after", "").strip()
    return float(value) if value.isdigit() else None
