"""Where `ragpulse export-cases` finds evaluated records: the page's SQLite store, the results topic,
or a running sidecar's page API.

Every source yields records in the one shape the page's detail view has (`queries.detail`: the
record's columns, its passages in rank order, every metric's result), newest first, so the
conversion into test cases is written once. The store is opened read-only (the sidecar may be
writing it); the results topic is read from `--since` to its end into an in-memory store through
the page's own reader code, so results of one record merge exactly as the page merges them.
Failures to reach a source are a `SourceError`: one line for the user, never a traceback.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from kafka import KafkaConsumer
from kafka.errors import KafkaError
from kafka.structs import TopicPartition

from collector.page import queries
from collector.page.results_reader import from_message
from collector.page.store import Store, StoredEvaluation
from collector.pipeline.offsets import offsets_at
from collector.review.corrections import Correction
from evaluators.redaction import redact, without_credentials

_TOPIC_IDLE_S = 30.0  # the topic's end was not reached, yet nothing arrived for this long: stop reading
_BOOTSTRAP_TIMEOUT_MS = 10_000  # an unreachable broker is reported after this long
_API_MAX_ROWS = 1000  # what the page's /api/evaluations lists at most


class SourceError(Exception):
    """A source cannot be read; the message is the one line the user sees."""


@dataclass(frozen=True)
class CaseFilters:
    """Which records become cases: those with a selected evaluation since `since` (unix seconds)."""

    since: float
    failed_only: bool = True
    metrics: frozenset[str] = frozenset()
    service: str = ""
    route: str = ""
    version: str = ""  # service.version or the prompt version
    # Records a reviewer corrected since `since` (whatever their outcome and whenever they were judged).
    corrected: bool = False
    notes: list[str] = field(default_factory=list, compare=False)  # what a source wants the user told

    def selected(self, record: dict[str, Any]) -> bool:
        """The exact test, applied to whatever each source could narrow down by itself."""
        if self.service and record.get("service") != self.service:
            return False
        if self.route and record.get("route") != self.route:
            return False
        if self.version and self.version not in (record.get("service_version"), record.get("prompt_version")):
            return False
        return any(map(self._chosen, record.get("evaluations") or ()))

    def _chosen(self, evaluation: dict[str, Any]) -> bool:
        if self.metrics and evaluation.get("metric") not in self.metrics:
            return False
        if self.corrected:  # the correction's time counts: a review may come days after the judge
            correction = evaluation.get("correction")
            return isinstance(correction, dict) and (correction.get("corrected_at") or 0) >= self.since
        return (evaluation.get("evaluated_at") or 0) >= self.since and (
            not self.failed_only or evaluation.get("outcome") == "failed"
        )


# --- the page's store --------------------------------------------------------------------------
def store_records(path: Path, filters: CaseFilters) -> Generator[dict[str, Any], None, None]:
    """Records of a store file, opened read-only: a running sidecar keeps writing it meanwhile."""
    if not path.is_file():
        raise SourceError(f"{path}: no such file (the sidecar's page.store_path)")
    try:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=10.0)
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: cannot open: {exc}") from None
    db.row_factory = sqlite3.Row
    try:
        db.execute("PRAGMA query_only=1")
        yield from _matching(db, filters, str(path))
    finally:
        db.close()


def _matching(
    db: sqlite3.Connection, filters: CaseFilters, name: str
) -> Generator[dict[str, Any], None, None]:
    try:
        if filters.corrected and not _has_corrections(db):
            filters.notes.append(f"{name} holds no corrections (written before reviewers could correct)")
            return
        query, args = _candidates(filters)
        candidates = db.execute(query, args).fetchall()
    except sqlite3.Error as exc:  # not a database, or not ragpulse's: one line, no traceback
        raise SourceError(f"{name}: not a ragpulse page store ({exc})") from None
    for trace_id, span_id in candidates:
        try:
            record = queries.detail(db, trace_id, span_id)
        except (sqlite3.Error, ValueError) as exc:  # a row deleted meanwhile, or a damaged page
            raise SourceError(f"{name}: reading {trace_id}:{span_id} failed ({exc})") from None
        if record is not None and filters.selected(record):
            yield record


def _has_corrections(db: sqlite3.Connection) -> bool:
    """An older store file opened read-only has no corrections table (nothing creates it there)."""
    query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'corrections'"
    return db.execute(query).fetchone() is not None


def _candidates(filters: CaseFilters) -> tuple[str, list[object]]:
    """The records that may match, newest first (of judgement, or of correction with `corrected`);
    `CaseFilters.selected` then tests each exactly."""
    marks, metric_args = ",".join("?" * len(filters.metrics)), sorted(filters.metrics)

    def metric_test(alias: str) -> str:
        return f" AND {alias}.metric IN ({marks})" if filters.metrics else ""

    record_test, record_args = "", []
    for column, value in (("service", filters.service), ("route", filters.route)):
        if value:
            record_test += f" AND r.{column} = ?"
            record_args.append(value)
    if filters.corrected:
        query = f"""SELECT r.trace_id, r.span_id FROM records r JOIN (
                SELECT c.trace_id, c.span_id, MAX(c.corrected_at) AS at FROM corrections c
                WHERE c.corrected_at >= ?{metric_test("c")} GROUP BY c.trace_id, c.span_id
            ) c ON c.trace_id = r.trace_id AND c.span_id = r.span_id
            WHERE 1{record_test} ORDER BY c.at DESC, r.id DESC"""
        return query, [filters.since, *metric_args, *record_args]
    failed = " AND e.outcome = 'failed'" if filters.failed_only else ""
    query = f"""SELECT r.trace_id, r.span_id FROM records r WHERE r.id IN (
            SELECT e.record_id FROM evaluations e WHERE e.evaluated_at >= ?{failed}{metric_test("e")})
        {record_test} ORDER BY r.evaluated_at DESC, r.id DESC"""
    return query, [filters.since, *metric_args, *record_args]


# --- the results topic -------------------------------------------------------------------------
def topic_records(bootstrap: str, topic: str, filters: CaseFilters) -> Generator[dict[str, Any], None, None]:
    """Results written since `filters.since`, read up to the topic's current end (outside any group)."""
    store = Store()  # in memory: the page's upsert merges one record's metrics into one row
    try:
        malformed = _read_topic(bootstrap, topic, filters, store)
        if malformed:
            filters.notes.append(f"{malformed} messages on {topic} were not results documents (skipped)")
        with store.reader() as db:
            yield from _matching(db, filters, topic)
    finally:
        store.close()


@contextlib.contextmanager
def _kafka_logs_quiet() -> Iterator[None]:
    """kafka-python logs each refused connection as ERROR lines; the user gets one line of ours."""
    kafka_logger = logging.getLogger("kafka")
    level = kafka_logger.level
    kafka_logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        kafka_logger.setLevel(level)


def _read_topic(bootstrap: str, topic: str, filters: CaseFilters, store: Store) -> int:
    with _kafka_logs_quiet():
        return _read_partitions(bootstrap, topic, filters, store)


def _read_partitions(bootstrap: str, topic: str, filters: CaseFilters, store: Store) -> int:
    try:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=None,
            enable_auto_commit=False,
            bootstrap_timeout_ms=_BOOTSTRAP_TIMEOUT_MS,
        )
    except (KafkaError, ValueError) as exc:
        raise SourceError(f"cannot reach Kafka at {bootstrap}: {exc}") from None
    malformed = 0
    try:
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        if not partitions:
            raise SourceError(f"no topic {topic!r} on {bootstrap} (--results-topic)")
        consumer.assign(partitions)
        for partition, offset in offsets_at(consumer, partitions, int(filters.since * 1000)).items():
            consumer.seek(partition, offset)
        ends = consumer.end_offsets(partitions)
        idle_since = time.monotonic()
        while any(consumer.position(tp) < ends[tp] for tp in partitions):
            rows: list[StoredEvaluation] = []
            corrected: list[Correction] = []
            for messages in consumer.poll(timeout_ms=500, max_records=1000).values():
                for message in messages:
                    try:
                        row = from_message(message.value, message.timestamp)
                    except (ValueError, TypeError, KeyError, OverflowError, RecursionError):
                        malformed += 1
                        continue
                    if isinstance(row, Correction):  # a reviewer's correction (--corrected reads them)
                        corrected.append(row)
                        continue
                    # Record-level filters only: the record's other metrics belong in the case too.
                    if (not filters.service or row.service == filters.service) and (
                        not filters.route or row.route == filters.route
                    ):
                        rows.append(row)
            if corrected:
                store.write_corrections(corrected)
            if rows or corrected:
                store.write(rows)
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > _TOPIC_IDLE_S:
                filters.notes.append(f"{topic} stopped answering before its end; exporting what was read")
                break
    except KafkaError as exc:
        raise SourceError(f"reading {topic} on {bootstrap} failed: {exc}") from None
    finally:
        with contextlib.suppress(Exception):
            consumer.close()
    return malformed


# --- a running sidecar's page API ----------------------------------------------------------------
def api_records(url: str, token: str | None, filters: CaseFilters) -> Generator[dict[str, Any], None, None]:
    """Records from `/api/evaluations` (the page's list: 1000 rows at most) and their detail views.
    With `corrected`, the records listed (judged in the page's last 24 hours at most) a reviewer
    corrected since `since`: the page lists evaluations, not corrections."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    params = {"limit": str(_API_MAX_ROWS), "window": _window(filters.since)}
    if filters.failed_only:
        params["failed"] = "1"
    if len(filters.metrics) == 1:
        (params["metric"],) = filters.metrics
    for name in ("service", "route"):
        if getattr(filters, name):
            params[name] = getattr(filters, name)
    with httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=30.0) as client:
        listing = _get(client, "/api/evaluations", params)
        rows = listing.get("evaluations") if isinstance(listing, dict) else None
        if not isinstance(rows, list):
            shown = without_credentials(url)
            raise SourceError(f"{shown}: /api/evaluations did not answer as a ragpulse page")
        if len(rows) >= _API_MAX_ROWS:
            filters.notes.append(
                f"the page API lists at most {_API_MAX_ROWS} evaluations: narrow --since or the filters, "
                "or read the store or the results topic"
            )
        seen: set[tuple[str, str]] = set()
        for row in rows:
            key = (str(row.get("trace_id")), str(row.get("span_id")))
            # a correction made since `since` may be of an older evaluation: its detail view decides
            if key in seen or (not filters.corrected and (row.get("evaluated_at") or 0) < filters.since):
                continue
            seen.add(key)
            record = _get(client, f"/api/evaluations/{quote(key[0], safe='')}/{quote(key[1], safe='')}")
            if isinstance(record, dict) and filters.selected(record):
                yield record


def _window(since: float) -> str:
    """The page's smallest listing window that reaches back to `since` (24h at most)."""
    wanted = time.time() - since
    return next((name for name, seconds in queries.WINDOWS.items() if seconds >= wanted), "24h")


def _get(client: httpx.Client, path: str, params: dict[str, str] | None = None) -> Any:
    shown = without_credentials(str(client.base_url))  # errors name the page, never its credentials
    try:
        response = client.get(path, params=params)
    except httpx.HTTPError as exc:
        raise SourceError(f"cannot reach {shown}: {redact(str(exc)) or type(exc).__name__}") from None
    if response.status_code == 404 and path != "/api/evaluations":
        return None  # deleted by retention between the listing and now
    if response.status_code == 401:
        raise SourceError(f"{shown}: the page wants a token (the --token-env variable)")
    if response.status_code != 200:
        raise SourceError(f"{shown}{path}: HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError:
        raise SourceError(f"{shown}{path}: not JSON (is this a ragpulse metrics port?)") from None
