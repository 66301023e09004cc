"""/review: the evaluations worth a person's look, and why each was picked.

Three kinds, in this order: the cascade's disagreements (the offline judge said one outcome, the LLM
judge another: one of them is wrong), the evaluations the judge doubted most (the lowest calibrated
confidence of any of its verdicts; for a judge that gives none, a score nearest its threshold),
and a share drawn at random by trace id. The random share keeps the agreement estimate honest: a
queue of doubtful cases alone would make the judge look worse than it is on the rest of the traffic.
Evaluations already corrected, and error or unmeasured outcomes, are never listed.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from typing import Any

from collector.page import queries

CANDIDATES = 5000  # the newest evaluations looked at for one queue

_SELECT = """
SELECT r.trace_id, r.span_id, r.service, r.route, r.service_version, r.question, e.metric, e.outcome,
    e.score, e.threshold, e.lower_is_better, e.judge, e.verdicts, e.evaluated_at, e.offline_outcome
FROM evaluations e JOIN records r ON r.id = e.record_id
WHERE {condition} AND e.outcome IN ('passed', 'failed')
    AND NOT EXISTS (SELECT 1 FROM corrections c
                    WHERE c.trace_id = r.trace_id AND c.span_id = r.span_id AND c.metric = e.metric)
ORDER BY e.evaluated_at DESC LIMIT ?"""


def doubt(row: dict[str, Any]) -> tuple[tuple[int, float], str]:
    """How doubtful the judge was, as a sort key (smaller = more doubt), and the words that say so.
    Calibrated confidences come first, lowest first: a verdict the judge gave at 0.55 is a coin
    toss. A judge that gives none (an LLM judge) is ranked after them by how near the score is to its
    threshold, the only sign of doubt it leaves."""
    confidences = [
        v["confidence"]
        for v in json.loads(row["verdicts"] or "[]")
        if isinstance(v.get("confidence"), int | float)
    ]
    if confidences:
        lowest = min(confidences)
        return (0, lowest), f"the judge's least sure verdict: confidence {lowest:.2f}"
    if row["score"] is None or row["threshold"] is None:
        return (2, 0.0), ""
    margin = abs(row["score"] - row["threshold"])
    return (1, margin), f"score {row['score']:.2f} against threshold {row['threshold']:.2f}"


def drawn(row: dict[str, Any], share: float) -> bool:
    """Whether the evaluation falls in the random share: a hash of its ids, stable across reloads and
    replicas, and blind to what the judge said."""
    key = f"{row['trace_id']}:{row['span_id']}:{row['metric']}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") / 2**32 < share


def pick(
    db: sqlite3.Connection, filters: queries.Filters, now: float, size: int, random_share: float
) -> list[dict[str, Any]]:
    """The queue: disagreements, then the most doubted, with `random_share` of `size` drawn at random,
    among the evaluations `filters` select (the evaluations list's own filters and window)."""
    condition, args = queries.condition(filters, now)
    rows = [dict(row) for row in db.execute(_SELECT.format(condition=condition), [*args, CANDIDATES])]
    random_quota = math.ceil(size * random_share) if random_share > 0 else 0
    drawn_rows = [row for row in rows if drawn(row, random_share)][:random_quota]
    taken = {id(row) for row in drawn_rows}
    disagreements, doubted = [], []
    for row in rows:
        if id(row) in taken:
            continue
        if row["offline_outcome"] and row["offline_outcome"] != row["outcome"]:
            row["why"] = "disagreement"
            row["why_words"] = (
                f"the offline judge said {row['offline_outcome']}, the LLM judge {row['outcome']}"
            )
            disagreements.append(row)
        else:
            row["doubt"], row["why_words"] = doubt(row)
            row["why"] = "doubted"
            doubted.append(row)
    doubted.sort(key=lambda row: row["doubt"])
    for row in drawn_rows:
        row["why"], row["why_words"] = "random", "drawn at random (an unbiased check)"
    chosen = (disagreements + doubted)[: size - len(drawn_rows)] + drawn_rows
    for row in chosen:
        row.pop("verdicts", None)
        row.pop("doubt", None)
        row["lower_is_better"] = bool(row["lower_is_better"])
    return chosen
