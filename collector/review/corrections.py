"""A reviewer's correction of one evaluation: the value, its results-topic document, the store's table.

A reviewer reading an evaluation on the page says whether its outcome is right and, for a metric
judged claim by claim, what each claim really is (supported, contradicted, not stated), with an
optional note and the name they give. The correction carries what was corrected (service, judge,
score, threshold, the judge's verdict and confidence per claim), so it outlives the evaluation in the
store (evaluations expire after `page.retention_hours`, corrections are kept up to `MAX_KEPT`) and is
enough alone for the threshold fit and the export. One correction per (trace, span, metric): a later
one replaces it, on every replica, in any order of arrival.

On the results topic a correction is a document with `"type": "correction"` beside the results, so
every replica's page (`page.read_results_topic`) and `ragpulse export-cases` see it. With
`hide_texts` a correction keeps ids, verdicts and scores: no claim text and no note.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from collector.exporters.verdicts import json_number

DOCUMENT_TYPE = "correction"
CLAIM_VERDICTS = ("supported", "contradicted", "not_found")  # the page shows "not stated" for not_found
MAX_KEPT = 100_000
MAX_NOTE_CHARS = 1000
MAX_REVIEWER_CHARS = 80

SCHEMA = """
CREATE TABLE IF NOT EXISTS corrections (
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, metric TEXT NOT NULL,
    reviewer TEXT NOT NULL, corrected_at REAL NOT NULL, outcome_right INTEGER, claims TEXT NOT NULL,
    note TEXT, service TEXT NOT NULL, judge TEXT NOT NULL, outcome TEXT NOT NULL, score REAL,
    threshold REAL, lower_is_better INTEGER NOT NULL,
    PRIMARY KEY (trace_id, span_id, metric));
CREATE INDEX IF NOT EXISTS corrections_time ON corrections (corrected_at);
"""
_UPSERT = """
INSERT INTO corrections (trace_id, span_id, metric, reviewer, corrected_at, outcome_right, claims, note,
    service, judge, outcome, score, threshold, lower_is_better)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (trace_id, span_id, metric) DO UPDATE SET
    reviewer = excluded.reviewer, corrected_at = excluded.corrected_at,
    outcome_right = excluded.outcome_right, claims = excluded.claims, note = excluded.note,
    service = excluded.service, judge = excluded.judge, outcome = excluded.outcome,
    score = excluded.score, threshold = excluded.threshold, lower_is_better = excluded.lower_is_better
WHERE excluded.corrected_at >= corrections.corrected_at"""


class Invalid(ValueError):
    """A correction that cannot be recorded; the message is what the reviewer reads."""


@dataclass(frozen=True, slots=True)
class ClaimCorrection:
    index: int  # the claim's position among the evaluation's verdicts
    verdict: str  # the reviewer's: supported / contradicted / not_found
    judge_verdict: str  # the judge's, as the page showed it
    confidence: float | None = None  # the judge's calibrated P(its verdict), when it gave one
    claim: str | None = None  # the claim's text (None with hide_texts)


@dataclass(frozen=True, slots=True)
class Correction:
    trace_id: str
    span_id: str
    metric: str
    reviewer: str
    corrected_at: float  # unix seconds
    outcome_right: bool | None  # None: the reviewer marked only claims
    claims: tuple[ClaimCorrection, ...]
    note: str | None
    service: str
    judge: str
    outcome: str  # the judge's outcome the reviewer saw (passed / failed)
    score: float | None
    threshold: float | None
    lower_is_better: bool = False

    @property
    def human_passed(self) -> bool | None:
        """The outcome the reviewer says is right; None when they did not say."""
        if self.outcome_right is None or self.outcome not in ("passed", "failed"):
            return None
        return (self.outcome == "passed") == self.outcome_right

    def without_texts(self) -> Correction:
        return replace(self, note=None, claims=tuple(replace(c, claim=None) for c in self.claims))


def from_request(
    body: Any, evaluation: dict[str, Any], trace_id: str, span_id: str, now: float
) -> Correction:
    """A correction from the page's JSON body and the stored evaluation it corrects (the server's copy
    of the verdicts, not the browser's, says what the judge said); `Invalid` with a plain message."""
    if not isinstance(body, dict):
        raise Invalid("the body must be a JSON object")
    reviewer = body.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer.strip():
        raise Invalid("give your name (reviewer)")
    outcome_right = body.get("outcome_right")
    if outcome_right is not None and not isinstance(outcome_right, bool):
        raise Invalid("outcome_right is true, false or absent")
    if outcome_right is not None and evaluation.get("outcome") not in ("passed", "failed"):
        raise Invalid("only a passed or failed outcome can be marked right or wrong")
    verdicts = evaluation.get("verdicts") or []
    claims = []
    for entry in body.get("claims") or []:
        index = entry.get("index") if isinstance(entry, dict) else None
        verdict = entry.get("verdict") if isinstance(entry, dict) else None
        if (
            not isinstance(index, int)
            or not 0 <= index < len(verdicts)
            or verdicts[index].get("kind") != "claim"
        ):
            raise Invalid(f"claim {index!r} is not one of this evaluation's claims")
        if verdict not in CLAIM_VERDICTS:
            raise Invalid(f"a claim's verdict is one of {', '.join(CLAIM_VERDICTS)}")
        judged = verdicts[index]
        confidence = judged.get("confidence")
        claims.append(
            ClaimCorrection(
                index,
                verdict,
                str(judged.get("verdict", "")),
                float(confidence) if isinstance(confidence, int | float) else None,
                judged.get("item") if isinstance(judged.get("item"), str) else None,
            )
        )
    if outcome_right is None and not claims:
        raise Invalid("mark the outcome right or wrong, or at least one claim")
    note = body.get("note")
    if note is not None and not isinstance(note, str):
        raise Invalid("a note is text")
    return Correction(
        trace_id=trace_id,
        span_id=span_id,
        metric=str(evaluation["metric"]),
        reviewer=reviewer.strip()[:MAX_REVIEWER_CHARS],
        corrected_at=now,
        outcome_right=outcome_right,
        claims=tuple(claims),
        note=(note.strip()[:MAX_NOTE_CHARS] or None) if note else None,
        service=str(evaluation.get("service") or ""),
        judge=str(evaluation.get("judge") or ""),
        outcome=str(evaluation.get("outcome") or ""),
        score=json_number(evaluation.get("score")),
        threshold=json_number(evaluation.get("threshold")),
        lower_is_better=bool(evaluation.get("lower_is_better")),
    )


# --- the results topic -------------------------------------------------------------------------
def document(correction: Correction, hide_texts: bool = False) -> dict[str, Any]:
    c = correction.without_texts() if hide_texts else correction
    return {
        "type": DOCUMENT_TYPE,
        "trace_id": c.trace_id,
        "span_id": c.span_id,
        "metric": c.metric,
        "reviewer": c.reviewer,
        "corrected_at": c.corrected_at,
        "outcome_right": c.outcome_right,
        "claims": [_claim_document(claim) for claim in c.claims],
        "note": c.note,
        "service": c.service,
        "judge": c.judge,
        "outcome": c.outcome,
        "score": c.score,
        "threshold": c.threshold,
        "lower_is_better": c.lower_is_better,
    }


def from_document(value: dict[str, Any]) -> Correction:
    """A correction read back from the results topic (or the store); ValueError when it is not one."""
    keys = [value.get(k) for k in ("trace_id", "span_id", "metric", "reviewer")]
    trace_id, span_id, metric, reviewer = (k if isinstance(k, str) else "" for k in keys)
    if not (trace_id and span_id and metric and reviewer):
        raise ValueError("trace_id, span_id, metric or reviewer missing")
    corrected_at = json_number(value.get("corrected_at"))
    if corrected_at is None:
        raise ValueError("corrected_at missing")
    right = value.get("outcome_right")
    claims = []
    for claim in value.get("claims") or []:
        if (
            isinstance(claim, dict)
            and isinstance(claim.get("index"), int)
            and claim.get("verdict") in CLAIM_VERDICTS
        ):
            text = claim.get("claim")
            claims.append(
                ClaimCorrection(
                    claim["index"],
                    claim["verdict"],
                    str(claim.get("judge_verdict") or ""),
                    json_number(claim.get("confidence")),
                    text if isinstance(text, str) else None,
                )
            )
    note = value.get("note")
    return Correction(
        trace_id=trace_id,
        span_id=span_id,
        metric=metric,
        reviewer=reviewer[:MAX_REVIEWER_CHARS],
        corrected_at=corrected_at,
        outcome_right=right if isinstance(right, bool) else None,
        claims=tuple(claims),
        note=note[:MAX_NOTE_CHARS] if isinstance(note, str) else None,
        service=str(value.get("service") or ""),
        judge=str(value.get("judge") or ""),
        outcome=str(value.get("outcome") or ""),
        score=json_number(value.get("score")),
        threshold=json_number(value.get("threshold")),
        lower_is_better=value.get("lower_is_better") is True,
    )


def _claim_document(claim: ClaimCorrection) -> dict[str, Any]:
    return {
        "index": claim.index,
        "verdict": claim.verdict,
        "judge_verdict": claim.judge_verdict,
        "confidence": claim.confidence,
        "claim": claim.claim,
    }


# --- the store ---------------------------------------------------------------------------------
def write(db: sqlite3.Connection, corrections: Iterable[Correction], hide_texts: bool) -> None:
    """Upsert on the writer's connection, inside its transaction; the oldest go beyond `MAX_KEPT`."""
    for correction in corrections:
        c = correction.without_texts() if hide_texts else correction
        db.execute(
            _UPSERT,
            (
                c.trace_id, c.span_id, c.metric, c.reviewer, c.corrected_at,
                None if c.outcome_right is None else int(c.outcome_right),
                json.dumps([_claim_document(claim) for claim in c.claims], ensure_ascii=False),
                c.note, c.service, c.judge, c.outcome, c.score, c.threshold, int(c.lower_is_better),
            ),
        )  # fmt: skip
    db.execute(
        "DELETE FROM corrections WHERE rowid IN (SELECT rowid FROM corrections "
        "ORDER BY corrected_at DESC LIMIT -1 OFFSET ?)",
        (MAX_KEPT,),
    )


def _row(row: sqlite3.Row) -> Correction:
    value = dict(row)
    value["claims"] = json.loads(value["claims"] or "[]")
    value["outcome_right"] = None if value["outcome_right"] is None else bool(value["outcome_right"])
    value["lower_is_better"] = bool(value["lower_is_better"])
    return from_document(value)


def of_record(db: sqlite3.Connection, trace_id: str, span_id: str) -> dict[str, Correction]:
    """The corrections of one record's evaluations, by metric (the detail page); none in a store file
    written before corrections existed (opened read-only, it has no such table)."""
    try:
        rows = db.execute(
            "SELECT * FROM corrections WHERE trace_id = ? AND span_id = ?", (trace_id, span_id)
        ).fetchall()
    except sqlite3.OperationalError:
        return {}
    return {correction.metric: correction for correction in map(_row, rows)}


def labelled(db: sqlite3.Connection) -> list[Correction]:
    """Corrections that say the outcome, on a score, oldest first (what thresholds are fitted on)."""
    rows = db.execute(
        "SELECT * FROM corrections WHERE outcome_right IS NOT NULL AND score IS NOT NULL "
        "AND outcome IN ('passed', 'failed') ORDER BY corrected_at"
    )
    return [_row(row) for row in rows]


def count_since(db: sqlite3.Connection, since: float) -> int:
    (count,) = db.execute("SELECT COUNT(*) FROM corrections WHERE corrected_at >= ?", (since,)).fetchone()
    return int(count)
