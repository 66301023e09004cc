"""The page's review routes: the queue at `/review`, recording a correction, the fits.

    GET  /review                              the queue (HTML), filters service / metric / version
    GET  /api/review                          the same queue and the fits in force, as JSON
    POST /api/corrections/{trace_id}/{span_id} a correction (JSON, below), answered with the refitted fits

A correction's body: `{"metric": "faithfulness", "reviewer": "Ana", "outcome_right": false,
"claims": [{"index": 0, "verdict": "supported"}], "note": "..."}` (`claims` index the evaluation's
verdicts). It is written to the store (which refits the thresholds on the writer's thread), then sent
on the results topic for the other replicas and the export. Behind the page's token like the rest of
the page; a JSON body is required, so another site cannot post one from a visitor's browser.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from collector.page import queries
from collector.page.writer import StoreWriter
from collector.review import corrections, queue
from collector.review.config import ReviewConfig
from collector.review.corrections import Correction, Invalid
from collector.review.fit import FittedThresholds
from collector.review.metrics import CORRECTIONS

if TYPE_CHECKING:
    from collector.page.routes import PageRoutes

WINDOW = "24h"  # the queue looks at the last day's evaluations
WINDOW_S = queries.WINDOWS[WINDOW]
CLAIM_WORDS = {"supported": "supported", "contradicted": "contradicted", "not_found": "not stated"}


class ReviewRoutes:
    def __init__(
        self,
        page: PageRoutes,
        writer: StoreWriter,
        config: ReviewConfig,
        thresholds: FittedThresholds,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.page, self.writer, self.config, self.thresholds = page, writer, config, thresholds
        self._clock = clock
        self.publish: Callable[[Correction], None] | None = None  # the results topic, when there is one

    def routes(self) -> list[BaseRoute]:
        guard = self.page.guard
        return [
            Route("/review", guard(self.queue_page), methods=["GET"]),
            Route("/api/review", guard(self.queue_api, api=True), methods=["GET"]),
            Route("/api/corrections/{trace_id}/{span_id}", self.correct_api, methods=["POST"]),
        ]

    # --- the queue -------------------------------------------------------------------------
    def queue_data(self, filters: queries.Filters) -> dict[str, Any]:
        now = self._clock()
        with self.page.store.reader() as db:
            rows = queue.pick(db, filters, now, self.config.queue_size, self.config.random_share)
            choices = queries.choices(db, now - WINDOW_S)
            corrected_today = corrections.count_since(db, now - WINDOW_S)
        return {
            "queue": rows,
            "choices": choices,
            "corrected_today": corrected_today,
            "fits": [dataclasses.asdict(f) for f in self.thresholds.fits],
            "min_corrections": self.config.min_corrections,
        }

    def queue_page(self, request: Request) -> Response:
        filters = _filters(request)
        context = {**self.queue_data(filters), "filters": filters}
        return self.page.render(request, "review.html", context)

    def queue_api(self, request: Request) -> Response:
        return JSONResponse(self.queue_data(_filters(request)))

    # --- the detail page's form ------------------------------------------------------------
    def form(self, record: dict[str, Any], metric: str | None) -> dict[str, Any] | None:
        """What the evaluation view's review form shows: the metric under review (the one asked for,
        else the first judged claim by claim, else the first scored), its claims and its correction."""
        scored = [e for e in record["evaluations"] if e["outcome"] in ("passed", "failed")]
        if not scored:
            return None
        chosen = next((e for e in scored if e["metric"] == metric), None) or next(
            (e for e in scored if any(v.get("kind") == "claim" for v in e["verdicts"])), scored[0]
        )
        claims = [
            {**v, "index": i, "word": CLAIM_WORDS.get(v["verdict"], v["verdict"])}
            for i, v in enumerate(chosen["verdicts"])
            if v.get("kind") == "claim"
        ]
        return {
            "evaluation": chosen,
            "metrics": [e["metric"] for e in scored],
            "claims": claims,
            "correction": chosen.get("correction"),
            "choices": CLAIM_WORDS,
        }

    # --- recording a correction ------------------------------------------------------------
    async def correct_api(self, request: Request) -> Response:
        if self.page.token_required and not self.page.authorised(request):
            return self.page.unauthorised(request, api=True)
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "send the correction as application/json"}, 415)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, 400)
        trace_id, span_id = request.path_params["trace_id"], request.path_params["span_id"]
        return await run_in_threadpool(self._record, body, trace_id, span_id)

    def _record(self, body: Any, trace_id: str, span_id: str) -> Response:
        with self.page.store.reader() as db:
            record = queries.detail(db, trace_id, span_id)
        if record is None:
            return JSONResponse({"error": "no such evaluation in the store"}, 404)
        metric = body.get("metric") if isinstance(body, dict) else None
        evaluation = next((e for e in record["evaluations"] if e["metric"] == metric), None)
        if evaluation is None:
            return JSONResponse({"error": f"this record has no evaluation of {metric!r}"}, 400)
        try:
            correction = corrections.from_request(
                body, {**evaluation, "service": record["service"]}, trace_id, span_id, self._clock()
            )
        except Invalid as exc:
            return JSONResponse({"error": str(exc)}, 400)
        if not self.writer.submit([correction]) or not self.writer.flush():
            return JSONResponse({"error": "the page's store is busy; try again"}, 503)
        if self.publish is not None:
            self.publish(correction)
        said = {True: "right", False: "wrong", None: "unsaid"}[correction.outcome_right]
        CORRECTIONS.labels(correction.metric, said).inc()
        fits = [
            dataclasses.asdict(f)
            for f in self.thresholds.fits
            if f.metric == correction.metric and f.judge == correction.judge
        ]
        return JSONResponse(
            {"correction": corrections.document(correction, self.page.hide_texts), "fits": fits}
        )


def _filters(request: Request) -> queries.Filters:
    """The evaluations list's filters (service, metric, version, ...) over the last day."""
    return dataclasses.replace(queries.Filters.parse(request.query_params), window=WINDOW)
