"""The page's memory: an embedded SQLite store of recent evaluations with the record behind each.

Bounded twice, so a busy sidecar never fills its disk or its memory: evaluations older than the
retention window are deleted, and while the database is larger than its cap the oldest records go
first; both are counted in `ragpulse_store_evicted_total{reason}`. One connection writes (the
`StoreWriter` thread owns it); every page request reads on a connection of its own, so a slow
query never holds up writing: WAL for a file, read-uncommitted for the shared in-memory database.

The same result can arrive twice (this replica's own export and the results topic read back), so
every write is an upsert keyed by (trace id, span id, metric). With `hide_texts` no text is ever
written: the question, the answer, passage texts, the judge's reasons, and verdict items and reasons;
only an error's or an unmeasured result's reason stays (ragpulse's words on why there is no score).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from collector.page.metrics import STORE_EVICTED
from collector.page.stored import StoredEvaluation, StoredPassage, contradicted_passages
from collector.review import corrections
from collector.review.corrections import Correction
from evaluators.result import reason_holds_texts

__all__ = ["Store", "StoredEvaluation", "StoredPassage", "contradicted_passages"]  # the shapes, here too

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL,
    service TEXT NOT NULL, route TEXT NOT NULL, model TEXT NOT NULL,
    service_version TEXT NOT NULL DEFAULT '', prompt_version TEXT NOT NULL DEFAULT '',
    question TEXT, answer TEXT,
    evaluated_at REAL NOT NULL,
    conversation_id TEXT NOT NULL DEFAULT '', convention TEXT NOT NULL DEFAULT '', ended_at REAL,
    expected_output TEXT, baseline_output TEXT, reference_contexts TEXT, reference_context_ids TEXT,
    UNIQUE (trace_id, span_id));
CREATE INDEX IF NOT EXISTS records_time ON records (evaluated_at);
CREATE TABLE IF NOT EXISTS passages (
    record_id INTEGER NOT NULL, rank INTEGER NOT NULL,
    doc_id TEXT NOT NULL, score REAL, text TEXT, relevance TEXT,
    contradicts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (record_id, rank)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS passages_doc ON passages (doc_id);
CREATE TABLE IF NOT EXISTS evaluations (
    record_id INTEGER NOT NULL, metric TEXT NOT NULL,
    outcome TEXT NOT NULL, score REAL, threshold REAL, lower_is_better INTEGER NOT NULL,
    reason TEXT, cause TEXT, judge TEXT NOT NULL, judge_model TEXT NOT NULL,
    duration_s REAL NOT NULL, tokens INTEGER NOT NULL, cost_usd REAL NOT NULL,
    verdicts TEXT NOT NULL, verdicts_truncated INTEGER NOT NULL,
    evaluated_at REAL NOT NULL,
    PRIMARY KEY (record_id, metric));
CREATE INDEX IF NOT EXISTS evaluations_time ON evaluations (evaluated_at);
CREATE INDEX IF NOT EXISTS evaluations_metric_time ON evaluations (metric, evaluated_at);
"""
# Added after the first release: a store file written by an older ragpulse gains them, empty.
_LATER_COLUMNS: dict[str, dict[str, str]] = {"records": {
    "service_version": "TEXT NOT NULL DEFAULT ''",
    "prompt_version": "TEXT NOT NULL DEFAULT ''",
    "conversation_id": "TEXT NOT NULL DEFAULT ''",
    "convention": "TEXT NOT NULL DEFAULT ''",
    "ended_at": "REAL",
    "expected_output": "TEXT",
    "baseline_output": "TEXT",
    "reference_contexts": "TEXT",  # a JSON list
    "reference_context_ids": "TEXT",  # a JSON list
}, "evaluations": {"offline_outcome": "TEXT"}}  # fmt: skip

_UPSERT_RECORD = """
INSERT INTO records (trace_id, span_id, service, route, model, service_version, prompt_version, question,
    answer, evaluated_at, conversation_id, convention, ended_at, expected_output, baseline_output,
    reference_contexts, reference_context_ids)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (trace_id, span_id) DO UPDATE SET
    question = COALESCE(excluded.question, question), answer = COALESCE(excluded.answer, answer),
    service_version = MAX(service_version, excluded.service_version),
    prompt_version = MAX(prompt_version, excluded.prompt_version),
    conversation_id = MAX(conversation_id, excluded.conversation_id),
    convention = MAX(convention, excluded.convention), ended_at = COALESCE(ended_at, excluded.ended_at),
    expected_output = COALESCE(excluded.expected_output, expected_output),
    baseline_output = COALESCE(excluded.baseline_output, baseline_output),
    reference_contexts = COALESCE(excluded.reference_contexts, reference_contexts),
    reference_context_ids = COALESCE(excluded.reference_context_ids, reference_context_ids),
    evaluated_at = MAX(evaluated_at, excluded.evaluated_at)
RETURNING id"""
# A passage is relevant when any metric judged it so (as `evaluators.causes.passage_relevance`).
_UPSERT_PASSAGE = """
INSERT INTO passages (record_id, rank, doc_id, score, text, relevance, contradicts)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (record_id, rank) DO UPDATE SET
    score = COALESCE(excluded.score, score), text = COALESCE(excluded.text, text),
    relevance = CASE WHEN 'relevant' IN (relevance, excluded.relevance) THEN 'relevant'
                     ELSE COALESCE(relevance, excluded.relevance) END,
    contradicts = MAX(contradicts, excluded.contradicts)"""
_UPSERT_EVALUATION = """
INSERT OR REPLACE INTO evaluations (record_id, metric, outcome, score, threshold, lower_is_better,
    reason, cause, judge, judge_model, duration_s, tokens, cost_usd, verdicts, verdicts_truncated,
    evaluated_at, offline_outcome)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""


class Store:
    def __init__(
        self,
        path: Path | None = None,
        retention_s: float = 24 * 3600.0,
        max_bytes: int = 256 * 2**20,
        hide_texts: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path, self.retention_s, self.max_bytes = path, retention_s, max_bytes
        self.hide_texts, self._clock = hide_texts, clock
        if path is None:  # one named in-memory database shared by the writer's and readers' connections
            self._target, self._uri = f"file:ragpulse-page-{uuid.uuid4().hex}?mode=memory&cache=shared", True
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._target, self._uri = str(path), False
        # The writer's connection; opened here so a bad path fails at start, used by one thread only.
        self._db = self._connect()
        if path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA + corrections.SCHEMA)
        self._add_missing_columns()
        self._db.execute("CREATE INDEX IF NOT EXISTS records_conversation ON records (conversation_id)")

    def _add_missing_columns(self) -> None:
        for table, columns in _LATER_COLUMNS.items():
            present = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            for column, declaration in columns.items():
                if column not in present:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self._target, uri=self._uri, timeout=5.0, check_same_thread=False, isolation_level=None
        )
        connection.row_factory = sqlite3.Row
        return connection

    @contextlib.contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A connection of its own for one page request (any thread), closed afterwards."""
        connection = self._connect()
        try:
            connection.execute("PRAGMA query_only=1")
            if self.path is None:  # shared cache locks tables; reading uncommitted rows is fine for a page
                connection.execute("PRAGMA read_uncommitted=1")
            yield connection
        finally:
            connection.close()

    # --- writing (the writer thread only) ----------------------------------------------------
    def write(self, items: Sequence[StoredEvaluation]) -> list[tuple[StoredEvaluation, Exception]]:
        """Upsert `items` in one transaction; if that fails, one by one. Returns the rows refused."""
        try:
            with self._transaction():
                for item in items:
                    self._upsert(item)
            return []
        except (sqlite3.Error, ValueError, TypeError, OverflowError):
            refused: list[tuple[StoredEvaluation, Exception]] = []
            for item in items:
                try:
                    with self._transaction():
                        self._upsert(item)
                except (sqlite3.Error, ValueError, TypeError, OverflowError) as exc:
                    refused.append((item, exc))
            return refused

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _upsert(self, item: StoredEvaluation) -> None:
        hide = self.hide_texts
        (record_id,) = self._db.execute(
            _UPSERT_RECORD,
            (
                item.trace_id,
                item.span_id,
                item.service,
                item.route,
                item.model,
                item.service_version,
                item.prompt_version,
                None if hide else item.question,
                None if hide else item.answer,
                float(item.evaluated_at),
                item.conversation_id,
                item.convention,
                None if item.ended_at is None else float(item.ended_at),
                None if hide else item.expected_output,
                None if hide else item.baseline_output,
                None if hide or not item.reference_contexts else json.dumps(list(item.reference_contexts)),
                json.dumps(list(item.reference_context_ids)) if item.reference_context_ids else None,
            ),
        ).fetchone()
        contradicting = contradicted_passages(item.verdicts)
        for rank, passage in enumerate(item.passages or ()):
            self._db.execute(
                _UPSERT_PASSAGE,
                (
                    record_id,
                    rank,
                    passage.id,
                    passage.score,
                    None if hide else passage.text,
                    passage.relevance,
                    int(rank in contradicting),
                ),
            )
        verdicts = [
            {k: v for k, v in verdict.items() if k not in ("item", "reason")} if hide else verdict
            for verdict in item.verdicts
        ]
        self._db.execute(
            _UPSERT_EVALUATION,
            (
                record_id,
                item.metric,
                item.outcome,
                item.score,
                item.threshold,
                int(item.lower_is_better),
                None if hide and reason_holds_texts(item.outcome) else item.reason,
                item.cause,
                item.judge,
                item.judge_model,
                float(item.duration_s),
                int(item.tokens),
                float(item.cost_usd),
                json.dumps(verdicts, ensure_ascii=False),
                int(item.verdicts_truncated),
                float(item.evaluated_at),
                item.offline_outcome,
            ),
        )

    def write_corrections(self, items: Sequence[Correction]) -> None:
        """Upsert reviewers' corrections in one transaction (the writer thread only)."""
        with self._transaction():
            corrections.write(self._db, items, self.hide_texts)

    # --- bounds ------------------------------------------------------------------------------
    def used_bytes(self, db: sqlite3.Connection | None = None) -> int:
        """Pages in use (freed pages are reused, so the file stops growing at about the cap); on the
        writer's connection unless a reader's is given."""
        db = db or self._db
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        size: int = db.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def enforce_bounds(self) -> None:
        """Delete what is past the retention window, then the oldest records while over the size cap."""
        cutoff = self._clock() - self.retention_s
        expired = self._db.execute("SELECT id FROM records WHERE evaluated_at < ?", (cutoff,)).fetchall()
        self._delete([row[0] for row in expired], "retention")
        while self.used_bytes() > self.max_bytes:
            (count,) = self._db.execute("SELECT COUNT(*) FROM records").fetchone()
            if count == 0:
                return
            oldest = self._db.execute(
                "SELECT id FROM records ORDER BY evaluated_at LIMIT ?", (max(1, count // 20),)
            ).fetchall()
            self._delete([row[0] for row in oldest], "size")

    def _delete(self, record_ids: list[int], reason: str) -> None:
        for start in range(0, len(record_ids), 500):
            chunk = record_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            with self._transaction():
                evaluations = self._db.execute(
                    f"DELETE FROM evaluations WHERE record_id IN ({marks})", chunk
                ).rowcount
                self._db.execute(f"DELETE FROM passages WHERE record_id IN ({marks})", chunk)
                self._db.execute(f"DELETE FROM records WHERE id IN ({marks})", chunk)
            if evaluations:
                STORE_EVICTED.labels(reason).inc(evaluations)

    def close(self) -> None:
        self._db.close()
