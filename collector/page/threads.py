"""What the trace and conversation views ask of the store.

A trace view shows what ragpulse read from one trace: each RAG interaction it found (the span that
carried the answer, the instrumentation it came from, when it ended and when it was judged) with its
scores. A conversation view shows the turns that share a conversation id in the order they happened,
each with its scores, and the conversation metrics, which are judged once the conversation went
quiet and are stored on its last turn.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

from evaluators import CaseField, required_inputs

_RESULT_COLUMNS = "metric, outcome, score, threshold, lower_is_better, cause, reason, tokens, cost_usd"


@functools.lru_cache(maxsize=256)
def is_conversational(metric: str) -> bool:
    """A metric judged on a whole conversation (it reads the turns), not on one answer."""
    try:
        return CaseField.TURNS in required_inputs(metric)
    except Exception:  # a custom metric this process does not know: judged per answer
        return False


def _results(db: sqlite3.Connection, record_id: int) -> list[dict[str, Any]]:
    rows = db.execute(
        f"SELECT {_RESULT_COLUMNS} FROM evaluations WHERE record_id = ? ORDER BY metric", (record_id,)
    ).fetchall()
    return [{**dict(row), "lower_is_better": bool(row["lower_is_better"])} for row in rows]


def _record(db: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
    record = {k: row[k] for k in row.keys() if k != "id"}  # noqa: SIM118 (sqlite3.Row)
    ended = row["ended_at"]
    record["judged_after_s"] = max(0.0, row["evaluated_at"] - ended) if ended is not None else None
    record["evaluations"] = _results(db, row["id"])
    return record


def _in_order(db: sqlite3.Connection, column: str, value: str, tiebreak: str) -> list[sqlite3.Row]:
    """The records whose `column` is `value` in the order their spans ended (when they were judged for
    one that has no end), `tiebreak` ordering those that ended at once. `column` and `tiebreak` are
    this module's own names, never a request's."""
    rows: list[sqlite3.Row] = db.execute(
        f"SELECT * FROM records WHERE {column} = ? ORDER BY COALESCE(ended_at, evaluated_at), {tiebreak}",
        (value,),
    ).fetchall()
    return rows


def trace(db: sqlite3.Connection, trace_id: str) -> dict[str, Any] | None:
    """The RAG interactions ragpulse read from trace `trace_id`, in the order their spans ended."""
    rows = _in_order(db, "trace_id", trace_id, "span_id")
    if not rows:
        return None
    records = [_record(db, row) for row in rows]
    return {
        "trace_id": trace_id,
        "records": records,
        "judge_tokens": sum(e["tokens"] for r in records for e in r["evaluations"]),
        "judge_cost_usd": sum(e["cost_usd"] for r in records for e in r["evaluations"]),
    }


def conversation(db: sqlite3.Connection, conversation_id: str) -> dict[str, Any] | None:
    """The turns of `conversation_id` in order, each with its per-answer scores, and the
    conversation metrics (with the turn they were judged at)."""
    if not conversation_id:
        return None
    rows = _in_order(db, "conversation_id", conversation_id, "id")
    if not rows:
        return None
    turns, whole = [], []
    for number, row in enumerate(rows, 1):
        turn = _record(db, row)
        turn["number"] = number
        per_turn = []
        for result in turn.pop("evaluations"):
            if is_conversational(result["metric"]):
                whole.append({**result, "turn": number, "evaluated_at": row["evaluated_at"]})
            else:
                per_turn.append(result)
        turn["evaluations"] = per_turn
        turns.append(turn)
    metrics = sorted({e["metric"] for turn in turns for e in turn["evaluations"]})
    return {
        "conversation_id": conversation_id,
        "turns": turns,
        "metrics": metrics,  # the per-answer metrics: the columns of the turns table
        "conversation_metrics": sorted(whole, key=lambda e: (e["metric"], e["turn"])),
        "services": sorted({turn["service"] for turn in turns}),
    }
