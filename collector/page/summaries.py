"""What the overview asks of the store: scores per metric with their trend, failure causes, the
knowledge-base hotspots and the store's totals (`queries.py` has the lists and the detail)."""

from __future__ import annotations

import sqlite3
from typing import Any

from collector.page.queries import JOIN, stage


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
            {JOIN} WHERE e.evaluated_at >= ? GROUP BY 1, 2, 3 ORDER BY 1, 2, 3""",
        (since,),
    ).fetchall()
    trend: dict[tuple[str, str, str], list[float | None]] = {}
    for metric, service, route, bucket, mean in db.execute(
        f"""SELECT e.metric, r.service, r.route, CAST((e.evaluated_at - ?) / ? AS INTEGER), AVG(e.score)
            {JOIN} WHERE e.evaluated_at >= ? AND e.score IS NOT NULL GROUP BY 1, 2, 3, 4""",
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
