"""The operator endpoint: `/metrics` (Prometheus text or OpenMetrics with exemplars, by the
scraper's Accept header), `/healthz` (every stage's threads run and the event loop ticks) and
`/readyz` (receivers connected and the judge loaded or reachable), and the built-in page at `/`
(`collector.page`) when one is given.

The handlers are plain functions, so Starlette runs them in its thread pool: rendering a large
registry never holds up the server's event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from prometheus_client.exposition import choose_encoder
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from collector.http_server import HttpServer
from collector.metrics import REGISTRY

if TYPE_CHECKING:
    from collector.page.app import Page


class StatusServer:
    def __init__(
        self,
        host: str,
        port: int,
        ready: Callable[[], bool],
        alive: Callable[[], bool] = lambda: True,
        page: Page | None = None,
    ) -> None:
        self._ready, self._alive, self._page = ready, alive, page
        routes = [
            Route("/metrics", self._metrics, methods=["GET"]),
            Route("/healthz", self._healthz, methods=["GET"]),
            Route("/readyz", self._readyz, methods=["GET"]),
            *(page.routes.routes() if page is not None else ()),
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
        if self._page is not None:
            self._page.start()

    def _metrics(self, request: Request) -> Response:
        encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(encoder(REGISTRY), 200, headers={"Content-Type": content_type})

    def _healthz(self, request: Request) -> Response:
        if self._alive():
            return PlainTextResponse("ok\n")
        return PlainTextResponse("a receiver thread or the event loop stopped: restart\n", 503)

    def _readyz(self, request: Request) -> Response:
        return PlainTextResponse("ready\n") if self._ready() else PlainTextResponse("not ready\n", 503)

    def shutdown(self, timeout_s: float = 5.0) -> None:
        self._server.shutdown(timeout_s)
        if self._page is not None:  # after the server: the page answers until the very end
            self._page.close()
