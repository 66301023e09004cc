"""The operator endpoint: `/metrics` (Prometheus text or OpenMetrics with exemplars, by the
scraper's Accept header), `/healthz` (every stage's threads run and the event loop ticks) and
`/readyz` (receivers connected and the judge loaded or reachable), and the built-in page at `/`
(`collector.page`) when one is given.

The server has a thread and event loop of its own (`collector.http.server`), but it shares the
process, and so the GIL, with the pipeline (and on a small machine the CPUs with the judge): a render
is pure Python, and every thread rendering at once took its share of the interpreter from the
pipeline's loop (scraped every 50 ms, 370 ms renders piled up in the thread pool and evaluation fell
from 131 to 21 records/s). So a render runs in a worker thread, never on a loop, one at a time and at
most a quarter of the time, and scrapes that arrive while one waits share it (`SharedRender`); and
`Exposition` (collector.exporters.exposition) writes the same bytes as prometheus_client an order of
magnitude faster.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from prometheus_client.exposition import choose_encoder
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from collector.exporters.exposition import Encoder, Exposition
from collector.http.server import HttpServer
from collector.metrics import REGISTRY

if TYPE_CHECKING:
    from collector.page.app import Page


class SharedRender:
    """At most one render at a time, in a worker thread, and renders at most a quarter of the time;
    scrapes that arrive while a render waits for its turn share it.

    A scrape never gets a render that began before it arrived (its values are at least as new as the
    request), and however many scrapers poll, at most one render runs and one waits per format. A
    render is CPU bound: side by side, renders only split the GIL further with the pipeline, and on a
    small machine every millisecond of one is taken from the judge. So after a render the next one
    waits `rest` times as long as it took (wall time: the busier the process, the longer), so renders
    take at most a quarter of the time however often a scraper polls: one polling every 50 ms gets its
    answers a little later and evaluation keeps most of its pace (benchmarks/scrape.py); Prometheus,
    every 15 s or so, never waits. Called on the server's event loop only.
    """

    def __init__(self, render: Callable[[Encoder], bytes], rest: float = 3.0) -> None:
        self._render, self._rest = render, rest
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turn = asyncio.Lock()
        self._waiting: dict[str, asyncio.Future[bytes]] = {}
        self._rested_at = 0.0  # loop time before which no render starts

    async def __call__(self, key: str, encoder: Encoder) -> bytes:
        """The registry as `encoder` writes it; `key` (the content type) names the encoding."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a server started again runs a new loop
            self._loop, self._turn, self._waiting, self._rested_at = loop, asyncio.Lock(), {}, 0.0
        waiting = self._waiting.get(key)
        if waiting is None:
            waiting = self._waiting[key] = loop.create_task(self._run(key, encoder))
        return await asyncio.shield(waiting)  # one scraper gone does not cancel the others' render

    async def _run(self, key: str, encoder: Encoder) -> bytes:
        loop = asyncio.get_running_loop()
        async with self._turn:
            if (rest := self._rested_at - loop.time()) > 0:
                await asyncio.sleep(rest)
            del self._waiting[key]  # from here on, a new scrape needs a newer render
            started = loop.time()
            try:
                return await run_in_threadpool(self._render, encoder)
            finally:
                self._rested_at = loop.time() + self._rest * (loop.time() - started)


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
        self._render = SharedRender(Exposition(REGISTRY).encode)
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

    async def _metrics(self, request: Request) -> Response:
        encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        body = await self._render(content_type, encoder)
        return Response(body, 200, headers={"Content-Type": content_type})

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
