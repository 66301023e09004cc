"""What the page asks of the store: each view is one function returning JSON-ready data, which the
HTML templates and the `/api/...` endpoints both render, so the two can never disagree.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from evaluators import STAGE, Cause

WINDOWS = {"15m": 900, "1h": 3600, "6h": 6 * 3600, "24h": 24 * 3600}
ROLES = ("irrelevant", "contradicting")  # how a document took part, for the hotspots' links
_JOIN = "FROM evaluations e JOIN records r ON r.id = e.record_id"


def stage(cause: str | None) -> str:
    """retrieval / generation / unknown: whose problem a failure cause is."""
    return STAGE[Cause(cause)] if cause is not None and cause in Cause._value2member_map_ else "unknown"


@dataclass(frozen=True)
class Filters:
    """The query parameters of /evaluations (and /api/evaluations)."""

    failed: bool = False
    metric: str = ""
    service: str = ""
    route: str = ""
    version: str = ""  # the app's service.version
    document: str = ""  # a retrieved document id
    role: str = ""  # with `document`: irrelevant / contradicting (how the document took part)
    window: str = "1h"
    limit: int = 100

    @classmethod
    def parse(cls, params: dict[str, str]) -> Filters:
        window = params.get("window", "1h")
        role = params.get("role", "")
        try:
            limit = min(max(int(params.get("limit", "100")), 1), 1000)
        except ValueError:
            limit = 100
        return cls(
            failed=params.get("failed", "") in ("1", "true", "on", "yes"),
            metric=params.get("metric", ""),
            service=params.get("service", ""),
            route=params.get("route", ""),
            version=params.get("version", ""),
            document=params.get("document", ""),
            role=role if role in ROLES else "",
            window=window if window in WINDOWS else "1h",
            limit=limit,
        )


def overview(
    db: sqlite3.Connection, now: float, bucket_s: int = 300, buckets: int = 12
) -> list[dict[str, Any]]:
    """Per (metric, service, route) over the last `buckets` x `bucket_s`: counts, failure rate, mean
    score and the mean score per bucket (the sparkline; None where nothing was scored)."""
    since = now - bucket_s * buckets
    # Buckets on the clock's five-minute marks, the last one filling: a reload does not shift them.
    first_bucket = (now // bucket_s - (buckets - 1)) * bucket_s
    rows = db.execute(
        f"""SELECT e.metric, r.service, r.route, COUNT(*) AS evaluations,
                   SUM(e.outcome = 'failed') AS failed, SUM(e.outcome IN ('passed', 'failed')) AS measured,
                   SUM(e.outcome = 'error') AS errors, AVG(e.score) AS mean_score,
                   MAX(e.lower_is_better) AS lower_is_better, MAX(e.threshold) AS threshold
            {_JOIN} WHERE e.evaluated_at >= ? GROUP BY 1, 2, 3 ORDER BY 1, 2, 3""",
        (since,),
    ).fetchall()
    trend: dict[tuple[str, str, str], list[float | None]] = {}
    for metric, service, route, bucket, mean in db.execute(
        f"""SELECT e.metric, r.service, r.route, CAST((e.evaluated_at - ?) / ? AS INTEGER), AVG(e.score)
            {_JOIN} WHERE e.evaluated_at >= ? AND e.score IS NOT NULL GROUP BY 1, 2, 3, 4""",
        (first_bucket, bucket_s, first_bucket),
    ):
        trend.setdefault((metric, service, route), [None] * buckets)[
            min(max(int(bucket), 0), buckets - 1)
        ] = mean
    return [
        {
            "metric": row["metric"],
            "service": row["service"],
            "route": row["route"],
            "evaluations": row["evaluations"],
            "failed": row["failed"],
            "errors": row["errors"],
            "failure_rate": row["failed"] / row["measured"] if row["measured"] else None,
            "mean_score": row["mean_score"],
            "threshold": row["threshold"],
            "lower_is_better": bool(row["lower_is_better"]),
            "trend": trend.get((row["metric"], row["service"], row["route"]), [None] * buckets),
        }
        for row in rows
    ]


def causes(db: sqlite3.Connection, since: float) -> list[dict[str, Any]]:
    """Failed evaluations per cause since `since`, most frequent first, with the stage to blame."""
    found: dict[str, dict[str, Any]] = {}
    for cause, metric, count in db.execute(
        "SELECT COALESCE(cause, 'unknown'), metric, COUNT(*) FROM evaluations "
        "WHERE outcome = 'failed' AND evaluated_at >= ? GROUP BY 1, 2",
        (since,),
    ):
        entry = found.setdefault(cause, {"cause": cause, "stage": stage(cause), "count": 0, "metrics": {}})
        entry["count"] += count
        entry["metrics"][metric] = count
    return sorted(found.values(), key=lambda c: (-c["count"], c["cause"]))


def evaluations(db: sqlite3.Connection, filters: Filters, now: float) -> list[dict[str, Any]]:
    """The latest evaluations matching `filters`, newest first."""
    where: list[str] = ["e.evaluated_at >= ?"]
    args: list[object] = [now - WINDOWS[filters.window]]
    for column, value in (
        ("e.metric", filters.metric),
        ("r.service", filters.service),
        ("r.route", filters.route),
        ("r.service_version", filters.version),
    ):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if filters.failed:
        where.append("e.outcome = 'failed'")
    if filters.document:
        role = {"irrelevant": " AND relevance = 'irrelevant'", "contradicting": " AND contradicts = 1"}
        where.append(
            f"e.record_id IN (SELECT record_id FROM passages WHERE doc_id = ?{role.get(filters.role, '')})"
        )
        args.append(filters.document)
        if filters.role == "contradicting":
            where.append("""e.verdicts LIKE '%"verdict": "contradicted"%'""")  # the evaluations that say so
    rows = db.execute(
        f"""SELECT r.trace_id, r.span_id, r.service, r.route, r.model, r.service_version, r.prompt_version,
                   r.question, e.metric, e.outcome,
                   e.score, e.threshold, e.cause, e.judge, e.evaluated_at
            {_JOIN} WHERE {" AND ".join(where)} ORDER BY e.evaluated_at DESC, e.metric LIMIT ?""",
        (*args, filters.limit),
    ).fetchall()
    return [{**dict(row), "stage": stage(row["cause"]) if row["cause"] else None} for row in rows]


def choices(db: sqlite3.Connection, since: float) -> dict[str, list[str]]:
    """The metrics, services, routes and versions evaluated since `since`: the options of the filters."""
    found: dict[str, set[str]] = {"metric": set(), "service": set(), "route": set(), "version": set()}
    for metric, service, route, version in db.execute(
        f"SELECT e.metric, r.service, r.route, r.service_version {_JOIN} WHERE e.evaluated_at >= ? "
        "GROUP BY 1, 2, 3, 4",
        (since,),
    ):
        found["metric"].add(metric)
        found["service"].add(service)
        found["route"].add(route)
        found["version"].add(version)
    return {name: sorted(values) for name, values in found.items()}


def detail(db: sqlite3.Connection, trace_id: str, span_id: str) -> dict[str, Any] | None:
    """One record: question, answer, passages in rank order, and every metric's result."""
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
    for row in db.execute(
        "SELECT * FROM evaluations WHERE record_id = ? ORDER BY metric", (record["id"],)
    ).fetchall():
        result = {k: row[k] for k in row.keys() if k != "record_id"}  # noqa: SIM118 (sqlite3.Row)
        result["lower_is_better"] = bool(row["lower_is_better"])
        result["verdicts"] = json.loads(row["verdicts"])
        result["stage"] = stage(row["cause"]) if row["cause"] else None
        results.append(result)
    return {
        **{k: record[k] for k in record.keys() if k != "id"},  # noqa: SIM118 (sqlite3.Row)
        "passages": [{**dict(p), "contradicts": bool(p["contradicts"])} for p in passages],
        "evaluations": results,
        "tokens": sum(r["tokens"] for r in results),
        "cost_usd": sum(r["cost_usd"] for r in results),
    }


def hotspots(db: sqlite3.Connection, since: float, limit: int = 10) -> dict[str, list[dict[str, Any]]]:
    """Documents most often retrieved but judged irrelevant, and most often deciding a contradicted
    claim, since `since`: counts and their share of the document's retrievals."""
    rows = db.execute(
        "SELECT p.doc_id, COUNT(*) AS retrieved, SUM(p.relevance = 'irrelevant') AS irrelevant, "
        "SUM(p.contradicts) AS contradicting FROM passages p JOIN records r ON r.id = p.record_id "
        "WHERE r.evaluated_at >= ? AND p.doc_id != '' GROUP BY p.doc_id",
        (since,),
    ).fetchall()

    def top(column: str) -> list[dict[str, Any]]:
        ranked = sorted((r for r in rows if r[column]), key=lambda r: (-r[column], r["doc_id"]))[:limit]
        return [
            {
                "document": r["doc_id"],
                "count": r[column],
                "retrieved": r["retrieved"],
                "share": r[column] / r["retrieved"],
            }
            for r in ranked
        ]

    return {"irrelevant": top("irrelevant"), "contradicting": top("contradicting")}


def totals(db: sqlite3.Connection) -> dict[str, Any]:
    (stored,) = db.execute("SELECT COUNT(*) FROM evaluations").fetchone()
    oldest = db.execute("SELECT MIN(evaluated_at) FROM records").fetchone()[0]
    return {"evaluations": stored, "oldest": oldest}
