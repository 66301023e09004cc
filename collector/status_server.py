"""The operator endpoint: `/metrics` (Prometheus text or OpenMetrics with exemplars, by the
scraper's Accept header), `/healthz` (the process is alive) and `/readyz` (receivers connected
and the judge loaded or reachable)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client.exposition import choose_encoder

from collector.metrics import REGISTRY

logger = logging.getLogger(__name__)


class StatusServer:
    def __init__(self, host: str, port: int, ready: Callable[[], bool]) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body, content_type = server._route(
                    self.path.split("?")[0], self.headers.get("Accept")
                )
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                logger.debug("status: " + format, *args)

        self._ready = ready
        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="status-http", daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> None:
        self._thread.start()

    def _route(self, path: str, accept: str | None) -> tuple[int, bytes, str]:
        if path == "/metrics":
            encoder, content_type = choose_encoder(accept or "")
            return 200, encoder(REGISTRY), content_type
        if path == "/healthz":
            return 200, b"ok\n", "text/plain"
        if path == "/readyz":
            return (200, b"ready\n", "text/plain") if self._ready() else (503, b"not ready\n", "text/plain")
        return 404, b"not found\n", "text/plain"

    def shutdown(self) -> None:
        self._server.shutdown()
        self._server.server_close()
