"""The page's routes on the status server: HTML views at `/`, `/evaluations`, `/evaluations/{trace}/{span}`,
`/traces/{trace}` and `/conversations/{id}`, the same data as JSON under `/api/`, and the stylesheet
and script under `/static/`.

Handlers are plain functions (Starlette runs them in its thread pool, each on a store connection of
its own), so a slow query never holds up `/metrics`. With `page.token` set every view and API call
needs `Authorization: Bearer <token>` or the cookie that visiting `/?token=<token>` once sets;
`/metrics`, `/healthz` and `/readyz` are not routed here and stay open for scrapers and probes.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from collector.page import queries, summaries, threads, views
from collector.page.charts import sparkline
from collector.page.config import PageConfig
from collector.page.pipeline_state import pipeline_state
from collector.page.store import Store

HERE = Path(__file__).parent
COOKIE = "ragpulse_page"
_HOTSPOTS_TTL_S = 15.0  # the 24-hour scan is the costliest query; the overview reloads every few seconds

Handler = Callable[[Request], Response]


class Review(Protocol):
    """The review queue as the page mounts it (collector/review/routes.py): its routes, and the form the
    evaluation view shows. A protocol, so the page does not import the feature that builds on it."""

    def routes(self) -> list[BaseRoute]: ...

    def form(self, record: dict[str, Any], metric: str | None) -> dict[str, Any] | None: ...


class PageRoutes:
    def __init__(
        self,
        store: Store,
        config: PageConfig,
        *,
        hide_texts: bool = False,
        group_view: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.config, self.hide_texts, self.group_view = store, config, hide_texts, group_view
        self._clock = clock
        self._token = config.resolved_token()
        # The cookie proves the token was given without being the token: a copied cookie is not a password.
        self._cookie = (
            hmac.new(self._token.encode(), b"ragpulse page cookie", hashlib.sha256).hexdigest()
            if self._token
            else ""
        )
        self._hotspots: tuple[float, dict[str, Any]] = (-_HOTSPOTS_TTL_S, {})
        self.review: Review | None = None  # the review queue and corrections, set by `Page`
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes every text
        self.templates.env.filters.update(views.FILTERS)
        self.templates.env.globals.update(
            sparkline=sparkline,
            detail_url=views.detail_url,
            evaluations_url=views.evaluations_url,
            trace_url=views.trace_url,
            conversation_url=views.conversation_url,
            list_url=lambda filters, **changes: views.evaluations_url(**filters.params(**changes)),
            hide_texts=hide_texts,
            group_view=group_view,
            refresh_s=config.refresh_s,
        )

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.guard(self.overview_page), methods=["GET"]),
            Route("/evaluations", self.guard(self.evaluations_page), methods=["GET"]),
            Route("/evaluations/{trace_id}/{span_id}", self.guard(self.detail_page), methods=["GET"]),
            Route("/traces/{trace_id}", self.guard(self.trace_page), methods=["GET"]),
            Route(
                "/conversations/{conversation_id:path}", self.guard(self.conversation_page), methods=["GET"]
            ),
            Route("/api/overview", self.guard(self.overview_api, api=True), methods=["GET"]),
            Route("/api/evaluations", self.guard(self.evaluations_api, api=True), methods=["GET"]),
            Route("/api/evaluations/new", self.guard(self.newer_api, api=True), methods=["GET"]),
            Route("/api/traces/{trace_id}", self.guard(self.trace_api, api=True), methods=["GET"]),
            Route(
                "/api/conversations/{conversation_id:path}",
                self.guard(self.conversation_api, api=True),
                methods=["GET"],
            ),
            Route(
                "/api/evaluations/{trace_id}/{span_id}",
                self.guard(self.detail_api, api=True),
                methods=["GET"],
            ),
            Route("/api/hotspots", self.guard(self.hotspots_api, api=True), methods=["GET"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
            *(self.review.routes() if self.review is not None else ()),
        ]

    # --- data ------------------------------------------------------------------------------
    def overview_data(self) -> dict[str, Any]:
        now = self._clock()
        with self.store.reader() as db:
            rows = summaries.overview(db, now)
            causes = summaries.causes(db, now - 3600)
            totals = summaries.totals(db)
            used = self.store.used_bytes(db)
        return {
            "now": now,
            "scores": rows,
            "causes": causes,
            "hotspots": self.hotspots_data(),
            "pipeline": pipeline_state(),
            "store": {**totals, "used_bytes": used, "max_bytes": self.store.max_bytes},
            "group_view": self.group_view,
            "hide_texts": self.hide_texts,
        }

    def hotspots_data(self) -> dict[str, Any]:
        fetched, data = self._hotspots
        now = self._clock()
        if now - fetched >= _HOTSPOTS_TTL_S or not data:
            with self.store.reader() as db:
                data = summaries.hotspots(db, now - 24 * 3600)
            self._hotspots = (now, data)
        return data

    def evaluations_data(self, filters: queries.Filters) -> tuple[dict[str, Any], queries.Filters]:
        """One page of the list, read as of `filters.until` (now, rounded up to the millisecond, for a
        first look): the filters returned carry that moment, for the links to the other pages."""
        now = self._clock()
        if filters.until is None:
            filters = replace(filters, until=math.ceil(now * 1000) / 1000)
        with self.store.reader() as db:
            total = queries.matching(db, filters, now)
            pages = max(1, math.ceil(total / filters.limit))
            filters = replace(filters, page=min(filters.page, pages))
            rows = queries.evaluations(db, filters, now)
        data = {
            "evaluations": rows,
            "total": total,
            "page": filters.page,
            "pages": pages,
            "per_page": filters.limit,
            "until": filters.until,
        }
        return data, filters

    def detail_data(self, trace_id: str, span_id: str) -> dict[str, Any] | None:
        with self.store.reader() as db:
            record = queries.detail(db, trace_id, span_id)
        if record is not None:
            # `page.trace_url` (the user's tracing backend) when set, else the page's own trace view.
            external = views.trace_link(self.config.trace_url, trace_id, span_id)
            record["trace_url"] = external or views.trace_url(trace_id)
            record["trace_url_external"] = external is not None
        return record

    def trace_data(self, trace_id: str) -> dict[str, Any] | None:
        with self.store.reader() as db:
            trace = threads.trace(db, trace_id)
        if trace is not None:
            trace["external_url"] = views.trace_link(self.config.trace_url, trace_id, "")
        return trace

    def conversation_data(self, conversation_id: str) -> dict[str, Any] | None:
        with self.store.reader() as db:
            return threads.conversation(db, conversation_id)

    # --- HTML ------------------------------------------------------------------------------
    def overview_page(self, request: Request) -> Response:
        return self.render(request, "overview.html", self.overview_data())

    def evaluations_page(self, request: Request) -> Response:
        data, filters = self.evaluations_data(queries.Filters.parse(request.query_params))
        with self.store.reader() as db:
            choices = queries.choices(db, self._clock() - queries.WINDOWS["24h"])
        newer = {**filters.params(page=1, until=None), "since": f"{filters.until:.3f}"}
        context = {
            **data,
            "rows": data["evaluations"],
            "filters": filters,
            "choices": choices,
            "windows": list(queries.WINDOWS),
            "per_page_choices": queries.PER_PAGE,
            "outcomes": queries.OUTCOMES,
            "newer_url": "/api/evaluations/new?" + urlencode(newer),
        }
        return self.render(request, "evaluations.html", context)

    def trace_page(self, request: Request) -> Response:
        trace = self.trace_data(request.path_params["trace_id"])
        if trace is None:
            return self.render(request, "missing.html", {"params": request.path_params}, 404)
        return self.render(request, "trace.html", {"trace": trace})

    def conversation_page(self, request: Request) -> Response:
        conversation = self.conversation_data(request.path_params["conversation_id"])
        if conversation is None:
            return self.render(request, "missing.html", {"params": request.path_params}, 404)
        return self.render(request, "conversation.html", {"conversation": conversation})

    def detail_page(self, request: Request) -> Response:
        record = self.detail_data(request.path_params["trace_id"], request.path_params["span_id"])
        if record is None:
            return self.render(request, "missing.html", {"params": request.path_params}, 404)
        claim_metric, claim_list = views.claims(record["evaluations"])
        context = {
            "record": record,
            "claim_metric": claim_metric,
            "claims": claim_list,
            "segments": views.mark_claims(record["answer"] or "", claim_list),
            "review": self.review.form(record, request.query_params.get("review")) if self.review else None,
            "deciding": {  # passage index -> the numbers of the claims it decides
                index: [n for n, claim in enumerate(claim_list, 1) if index in claim.get("passages", ())]
                for index in range(len(record["passages"]))
            },
        }
        return self.render(request, "detail.html", context)

    def render(self, request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        return self.templates.TemplateResponse(request, name, context, status_code=status)

    # --- JSON ------------------------------------------------------------------------------
    def overview_api(self, request: Request) -> Response:
        return JSONResponse(self.overview_data())

    def evaluations_api(self, request: Request) -> Response:
        data, _ = self.evaluations_data(queries.Filters.parse(request.query_params))
        return JSONResponse(data)

    def newer_api(self, request: Request) -> Response:
        """How many evaluations matching the list's filters arrived since it was read (`since`)."""
        filters = queries.Filters.parse(request.query_params)
        try:
            since = float(request.query_params.get("since", ""))
        except ValueError:
            return JSONResponse({"error": "since (unix seconds) is required"}, 400)
        with self.store.reader() as db:
            return JSONResponse({"new": queries.newer(db, filters, since, self._clock())})

    def trace_api(self, request: Request) -> Response:
        trace = self.trace_data(request.path_params["trace_id"])
        return JSONResponse(trace) if trace is not None else JSONResponse({"error": "not stored"}, 404)

    def conversation_api(self, request: Request) -> Response:
        conversation = self.conversation_data(request.path_params["conversation_id"])
        if conversation is None:
            return JSONResponse({"error": "not stored"}, 404)
        return JSONResponse(conversation)

    def detail_api(self, request: Request) -> Response:
        record = self.detail_data(request.path_params["trace_id"], request.path_params["span_id"])
        return JSONResponse(record) if record is not None else JSONResponse({"error": "not stored"}, 404)

    def hotspots_api(self, request: Request) -> Response:
        return JSONResponse(self.hotspots_data())

    # --- the token -------------------------------------------------------------------------
    def guard(self, handler: Handler, api: bool = False) -> Handler:
        """`handler` behind the token, when one is set (a plain function: it runs in the thread pool)."""

        def guarded(request: Request) -> Response:
            if self._token is None:
                return handler(request)
            given = request.query_params.get("token")
            if given is not None and not api:
                if not _same(given, self._token):
                    return self.unauthorised(request, api)
                url = request.url.remove_query_params("token")  # the token leaves the address bar
                response = RedirectResponse(url.path + (f"?{url.query}" if url.query else ""), 303)
                response.set_cookie(COOKIE, self._cookie, httponly=True, samesite="strict", path="/")
                return response
            if self.authorised(request):
                return handler(request)
            return self.unauthorised(request, api)

        return guarded

    @property
    def token_required(self) -> bool:
        return self._token is not None

    def authorised(self, request: Request) -> bool:
        assert self._token is not None
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and _same(value.strip(), self._token):
            return True
        return _same(request.cookies.get(COOKIE, ""), self._cookie)

    def unauthorised(self, request: Request, api: bool) -> Response:
        headers = {"WWW-Authenticate": 'Bearer realm="ragpulse"'}
        if api:
            return JSONResponse({"error": "a bearer token is required (page.token)"}, 401, headers=headers)
        response = self.render(request, "unauthorised.html", {}, 401)
        response.headers.update(headers)
        return response


def _same(given: str, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())
