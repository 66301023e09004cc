"""What the page asks of the store: each view is one function returning JSON-ready data, which the
HTML templates and the `/api/...` endpoints both render, so the two can never disagree.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from collector.review import corrections
from evaluators import STAGE, Cause

WINDOWS = {"15m": 900, "1h": 3600, "6h": 6 * 3600, "24h": 24 * 3600}
ROLES = ("irrelevant", "contradicting")  # how a document took part, for the hotspots' links
JOIN = "FROM evaluations e JOIN records r ON r.id = e.record_id"


def stage(cause: str | None) -> str:
    """retrieval / generation / unknown: whose problem a failure cause is."""
    return STAGE[Cause(cause)] if cause is not None and cause in Cause._value2member_map_ else "unknown"


SORTS = ("time", "score", "metric")  # the columns the list sorts by (then newest first)
OUTCOMES = ("passed", "failed", "error", "unmeasured")
PER_PAGE = (25, 50, 100, 200)


def _float(value: str | None) -> float | None:
    try:
        number = float(value) if value not in (None, "") else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


@dataclass(frozen=True)
class Filters:
    """The query parameters of /evaluations (and /api/evaluations): the whole state of the list, so
    its address can be shared and the back button returns to the same rows."""

    outcome: str = ""  # passed / failed / error / unmeasured; `failed=1` is outcome=failed
    metric: str = ""
    cause: str = ""  # a failure cause; "unknown" matches failures without one
    service: str = ""
    route: str = ""
    version: str = ""  # the app's service.version
    q: str = ""  # words in the question or the answer, or the start of a trace id
    score_min: float | None = None
    score_max: float | None = None
    document: str = ""  # a retrieved document id
    role: str = ""  # with `document`: irrelevant / contradicting (how the document took part)
    window: str = "1h"
    sort: str = "time"
    order: str = "desc"
    page: int = 1
    limit: int = 50  # rows per page
    # Pages are read as of this moment (unix s): evaluations that arrive while a person pages through
    # do not shift the rows under them. Unset: now (the first page, live).
    until: float | None = None

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> Filters:
        window, role = params.get("window", "1h"), params.get("role", "")
        outcome = params.get("outcome", "")
        if params.get("failed", "") in ("1", "true", "on", "yes"):
            outcome = "failed"
        sort, order = params.get("sort", "time"), params.get("order", "")
        try:
            limit = min(max(int(params.get("limit", "50")), 1), 1000)
        except ValueError:
            limit = 50
        try:
            page = max(int(params.get("page", "1")), 1)
        except ValueError:
            page = 1
        sort = sort if sort in SORTS else "time"
        default_order = "desc" if sort == "time" else "asc"
        return cls(
            outcome=outcome if outcome in OUTCOMES else "",
            metric=params.get("metric", ""),
            cause=params.get("cause", ""),
            service=params.get("service", ""),
            route=params.get("route", ""),
            version=params.get("version", ""),
            q=params.get("q", "").strip()[:200],
            score_min=_float(params.get("score_min")),
            score_max=_float(params.get("score_max")),
            document=params.get("document", ""),
            role=role if role in ROLES else "",
            window=window if window in WINDOWS else "1h",
            sort=sort,
            order=order if order in ("asc", "desc") else default_order,
            page=page,
            limit=limit,
            until=_float(params.get("until")),
        )

    def params(self, **changes: object) -> dict[str, str]:
        """The query parameters that say these filters (defaults left out), with `changes` applied:
        what the paging, sorting and "new evaluations" links carry."""
        values = {**{f.name: getattr(self, f.name) for f in fields(self)}, **changes}
        defaults = {f.name: f.default for f in fields(self)}
        defaults["order"] = "desc" if values["sort"] == "time" else "asc"
        kept: dict[str, str] = {}
        for name, value in values.items():
            if value is None or value == "" or value == defaults[name]:
                continue
            kept[name] = f"{value:.3f}" if name == "until" and isinstance(value, float) else str(value)
        return kept


def condition(filters: Filters, now: float, after: float | None = None) -> tuple[str, list[object]]:
    """The SQL condition of `filters` (at `now`), only what was evaluated after `after` if given: one
    time range, so the time index bounds the scan."""
    until = filters.until if filters.until is not None else now
    since = until - WINDOWS[filters.window]
    if after is not None and after >= since:
        where: list[str] = ["e.evaluated_at > ?", "e.evaluated_at <= ?"]
        args: list[object] = [after, until]
    else:
        where, args = ["e.evaluated_at >= ?", "e.evaluated_at <= ?"], [since, until]
    for column, value in (
        ("e.metric", filters.metric),
        ("e.outcome", filters.outcome),
        ("r.service", filters.service),
        ("r.route", filters.route),
        ("r.service_version", filters.version),
    ):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if filters.cause == "unknown":
        where.append("e.outcome = 'failed' AND (e.cause IS NULL OR e.cause = 'unknown')")
    elif filters.cause:
        where.append("e.cause = ?")
        args.append(filters.cause)
    if filters.score_min is not None:
        where.append("e.score >= ?")
        args.append(filters.score_min)
    if filters.score_max is not None:
        where.append("e.score <= ?")
        args.append(filters.score_max)
    if filters.q:
        pattern = filters.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where.append(
            "(r.question LIKE ? ESCAPE '\\' OR r.answer LIKE ? ESCAPE '\\' OR r.trace_id LIKE ? ESCAPE '\\')"
        )
        args += [f"%{pattern}%", f"%{pattern}%", f"{pattern.lower()}%"]
    if filters.document:
        role = {"irrelevant": " AND relevance = 'irrelevant'", "contradicting": " AND contradicts = 1"}
        where.append(
            f"e.record_id IN (SELECT record_id FROM passages WHERE doc_id = ?{role.get(filters.role, '')})"
        )
        args.append(filters.document)
        if filters.role == "contradicting":
            where.append("""e.verdicts LIKE '%"verdict": "contradicted"%'""")  # the evaluations that say so
    return " AND ".join(where), args


def _order(filters: Filters) -> str:
    direction = "ASC" if filters.order == "asc" else "DESC"
    first = {
        "time": f"e.evaluated_at {direction}",
        "score": f"e.score IS NULL, e.score {direction}, e.evaluated_at DESC",  # unscored ones last
        "metric": f"e.metric {direction}, e.evaluated_at DESC",
    }[filters.sort]
    return f"{first}, e.record_id DESC, e.metric"  # the primary key: a row never moves between pages


def evaluations(db: sqlite3.Connection, filters: Filters, now: float) -> list[dict[str, Any]]:
    """One page of the evaluations matching `filters`, in the order they ask for (newest first)."""
    where, args = condition(filters, now)
    rows = db.execute(
        f"""SELECT r.trace_id, r.span_id, r.service, r.route, r.model, r.service_version, r.prompt_version,
                   r.question, r.conversation_id, e.metric, e.outcome,
                   e.score, e.threshold, e.cause, e.judge, e.evaluated_at
            {JOIN} WHERE {where} ORDER BY {_order(filters)} LIMIT ? OFFSET ?""",
        (*args, filters.limit, (filters.page - 1) * filters.limit),
    ).fetchall()
    return [{**dict(row), "stage": stage(row["cause"]) if row["cause"] else None} for row in rows]


def matching(db: sqlite3.Connection, filters: Filters, now: float) -> int:
    """How many evaluations match `filters` (all pages)."""
    where, args = condition(filters, now)
    return int(db.execute(f"SELECT COUNT(*) {JOIN} WHERE {where}", args).fetchone()[0])


def newer(db: sqlite3.Connection, filters: Filters, since: float, now: float) -> int:
    """Evaluations matching `filters` that arrived after `since` (the moment the list was read)."""
    where, args = condition(replace(filters, until=None), now, after=since)
    return int(db.execute(f"SELECT COUNT(*) {JOIN} WHERE {where}", args).fetchone()[0])


def choices(db: sqlite3.Connection, since: float) -> dict[str, list[str]]:
    """The metrics, causes, services, routes and versions evaluated since `since`: the filters' options."""
    found: dict[str, set[str]] = {name: set() for name in ("metric", "cause", "service", "route", "version")}
    for metric, cause, service, route, version in db.execute(
        f"SELECT e.metric, e.cause, r.service, r.route, r.service_version {JOIN} WHERE e.evaluated_at >= ? "
        "GROUP BY 1, 2, 3, 4, 5",
        (since,),
    ):
        found["metric"].add(metric)
        if cause:
            found["cause"].add(cause)
        found["service"].add(service)
        found["route"].add(route)
        found["version"].add(version)
    return {name: sorted(values) for name, values in found.items()}


def detail(db: sqlite3.Connection, trace_id: str, span_id: str) -> dict[str, Any] | None:
    """One record: question, answer, passages in rank order, and every metric's result with the
    reviewer's correction of it (`correction`, a `collector.review.corrections.document`, or None)."""
    record = db.execute(
        "SELECT * FROM records WHERE trace_id = ? AND span_id = ?", (trace_id, span_id)
    ).fetchone()
    if record is None:
        return None
    passages = db.execute(
        "SELECT rank, doc_id AS id, score, text, relevance, contradicts FROM passages "
        "WHERE record_id = ? ORDER BY rank",
        (record["id"],),
    ).fetchall()
    results = []
    corrected = corrections.of_record(db, trace_id, span_id)
    for row in db.execute(
        "SELECT * FROM evaluations WHERE record_id = ? ORDER BY metric", (record["id"],)
    ).fetchall():
        result = {k: row[k] for k in row.keys() if k != "record_id"}  # noqa: SIM118 (sqlite3.Row)
        result["lower_is_better"] = bool(row["lower_is_better"])
        result["verdicts"] = json.loads(row["verdicts"])
        result["stage"] = stage(row["cause"]) if row["cause"] else None
        correction = corrected.get(row["metric"])  # a reviewer's, when one was recorded
        result["correction"] = None if correction is None else corrections.document(correction)
        results.append(result)
    return {
        **{k: record[k] for k in record.keys() if k != "id"},  # noqa: SIM118 (sqlite3.Row)
        "passages": [{**dict(p), "contradicts": bool(p["contradicts"])} for p in passages],
        "evaluations": results,
        # The judge's spend on this record (the app's own token usage is not recorded here).
        "judge_tokens": sum(r["tokens"] for r in results),
        "judge_cost_usd": sum(r["cost_usd"] for r in results),
    }
