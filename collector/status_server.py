"""The operator endpoint: `/metrics` (Prometheus text or OpenMetrics with exemplars, by the
scraper's Accept header), `/healthz` (the process is alive) and `/readyz` (receivers connected
and the judge loaded or reachable).

The handlers are plain functions, so Starlette runs them in its thread pool: rendering a large
registry never holds up the server's event loop.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client.exposition import choose_encoder
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from collector.http_server import HttpServer
from collector.metrics import REGISTRY


class StatusServer:
    def __init__(self, host: str, port: int, ready: Callable[[], bool]) -> None:
        self._ready = ready
        routes = [
            Route("/metrics", self._metrics, methods=["GET"]),
            Route("/healthz", self._healthz, methods=["GET"]),
            Route("/readyz", self._readyz, methods=["GET"]),
        ]
        self._server = HttpServer(
            Starlette(routes=routes),
            host,
            port,
            name="/metrics",
            setting="--metrics-port (RAGPULSE_METRICS_PORT)",
        )

    @property
    def port(self) -> int:
        return self._server.port

    def start(self) -> None:
        self._server.start()

    def _metrics(self, request: Request) -> Response:
        encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(encoder(REGISTRY), 200, headers={"Content-Type": content_type})

    def _healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok\n")

    def _readyz(self, request: Request) -> Response:
        return PlainTextResponse("ready\n") if self._ready() else PlainTextResponse("not ready\n", 503)

    def shutdown(self, timeout_s: float = 5.0) -> None:
        self._server.shutdown(timeout_s)
