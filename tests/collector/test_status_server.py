"""/metrics, /healthz, /readyz on the shared uvicorn server: negotiation, readiness, lifecycle."""

from __future__ import annotations

import http.client
import signal
import socket
import time

import pytest

from collector.http.status import StatusServer
from collector.metrics import SPANS_RECEIVED


def _get(port: int, path: str, accept: str | None = None, method: str = "GET") -> tuple[int, str, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers={"Accept": accept} if accept else {})
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read().decode()
    finally:
        connection.close()


def test_endpoints_negotiation_and_readiness() -> None:
    ready = [False]
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    server = StatusServer("127.0.0.1", 0, ready=lambda: ready[0])
    server.start()
    try:
        assert {sig: signal.getsignal(sig) for sig in handlers} == handlers  # the service owns signals
        SPANS_RECEIVED.labels("otlp").inc(0)
        status, content_type, text = _get(server.port, "/metrics")
        assert status == 200 and content_type.startswith("text/plain")
        assert "ragpulse_spans_received_total" in text
        openmetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"
        status, content_type, text = _get(server.port, "/metrics", accept=openmetrics)
        assert content_type.startswith("application/openmetrics-text") and text.endswith("# EOF\n")
        assert _get(server.port, "/healthz")[::2] == (200, "ok\n")
        assert _get(server.port, "/readyz")[::2] == (503, "not ready\n")
        ready[0] = True
        assert _get(server.port, "/readyz")[::2] == (200, "ready\n")
        assert _get(server.port, "/nope")[0] == 404
        assert _get(server.port, "/metrics", method="POST")[0] == 405
    finally:
        started = time.monotonic()
        server.shutdown()
    assert time.monotonic() - started < 3
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()


def test_a_taken_port_fails_start_in_the_callers_thread() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        server = StatusServer("127.0.0.1", taken.getsockname()[1], ready=lambda: True)
        with pytest.raises(OSError):
            server.start()
        server.shutdown()
