"""The group view: every result on the results topic into this replica's store.

In Kafka mode each replica scores only its own partitions, so its own exports alone would show a
slice of the traffic. The reader takes every partition of the results topic (assigned, no consumer
group: it must not take partitions from anyone, nor commit anything), starts at `now - retention`
and follows the topic. Results this replica wrote itself come back too; the store's upsert keeps
one copy. Documents are read leniently (older ones lack verdicts, passages and texts); one that is
not a result at all is counted in `ragpulse_results_read_total{outcome="malformed"}` and skipped.
Reviewers' corrections travel on the same topic (`collector/review/corrections.py`) and are stored too.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import datetime
from typing import Any

from kafka import KafkaConsumer
from kafka.structs import TopicPartition

from collector.exporters.kafka_results import KafkaResultsConfig
from collector.exporters.verdicts import json_number
from collector.logs import RateLimitedLog
from collector.page.metrics import RESULTS_READ
from collector.page.store import StoredEvaluation, StoredPassage
from collector.page.writer import StoreWriter
from collector.pipeline.offsets import offsets_at
from collector.receivers.kafka_options import security_options
from collector.review import corrections
from collector.review.corrections import Correction

logger = logging.getLogger(__name__)

_PARTITIONS_EVERY_S = 30.0  # new partitions of the topic are picked up this often
_RETRY_AFTER_S = 5.0


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def _verdict(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict) or not isinstance(value.get("verdict"), str):
        return None
    verdict: dict[str, Any] = {
        "kind": str(value.get("kind", "")),
        "verdict": value["verdict"],
        "passages": [i for i in value.get("passages") or () if isinstance(i, int) and 0 <= i < 10_000],
    }
    for key in ("item", "reason"):
        if isinstance(value.get(key), str):
            verdict[key] = value[key]
    if (confidence := json_number(value.get("confidence"))) is not None:
        verdict["confidence"] = confidence
    return verdict


def _passage(value: Any) -> StoredPassage | None:
    if not isinstance(value, dict) or value.get("id") is None:
        return None
    relevance = value.get("relevance")
    return StoredPassage(
        str(value["id"]),
        json_number(value.get("score")),
        _text(value.get("text")),
        relevance if relevance in ("relevant", "irrelevant") else None,
    )


def _timestamp(value: Any, fallback_s: float) -> float:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return fallback_s


def from_message(value: bytes, timestamp_ms: int) -> StoredEvaluation | Correction:
    """A results-topic document as the store keeps it: a result, or a reviewer's correction;
    ValueError when it is neither."""
    document = json.loads(value)
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    if document.get("type") == corrections.DOCUMENT_TYPE:
        return corrections.from_document(document)
    return stored_from_document(document, timestamp_ms)


def stored_from_document(document: dict[str, Any], timestamp_ms: int) -> StoredEvaluation:
    """A result document as the store keeps it; ValueError when it is not a result."""
    keys = (
        document.get("trace_id"),
        document.get("span_id"),
        document.get("metric"),
        document.get("outcome"),
    )
    if not all(isinstance(key, str) and key for key in keys):
        raise ValueError("trace_id, span_id, metric or outcome missing")
    raw_verdicts = document.get("verdicts")
    raw_passages = document.get("passages")
    verdicts = [_verdict(v) for v in raw_verdicts] if isinstance(raw_verdicts, list) else []
    passages = [_passage(p) for p in raw_passages] if isinstance(raw_passages, list) else None
    return StoredEvaluation(
        trace_id=document["trace_id"],
        span_id=document["span_id"],
        metric=document["metric"],
        outcome=document["outcome"],
        score=json_number(document.get("score")),
        evaluated_at=_timestamp(document.get("evaluated_at"), timestamp_ms / 1000),
        threshold=json_number(document.get("threshold")),
        lower_is_better=document.get("lower_is_better") is True,
        reason=_text(document.get("reason")),
        cause=_text(document.get("cause")),
        judge=_text(document.get("judge")) or "",
        judge_model=_text(document.get("judge_model")) or "",
        duration_s=json_number(document.get("duration_s")) or 0.0,
        tokens=int(json_number(document.get("tokens")) or 0),
        cost_usd=json_number(document.get("cost_usd")) or 0.0,
        verdicts=tuple(v for v in verdicts if v is not None),
        verdicts_truncated=int(json_number(document.get("verdicts_truncated")) or 0),
        service=_text(document.get("service")) or "",
        route=_text(document.get("route")) or "",
        model=_text(document.get("model")) or "",
        service_version=_text(document.get("service_version")) or "",
        prompt_version=_text(document.get("prompt_version")) or "",
        question=_text(document.get("question")),
        answer=_text(document.get("answer")),
        passages=None if passages is None else tuple(p or StoredPassage("") for p in passages),
        conversation_id=_text(document.get("conversation_id")) or "",
        expected_output=_text(document.get("expected_output")),
        baseline_output=_text(document.get("baseline_output")),
        reference_contexts=_texts(document.get("reference_contexts")),
        reference_context_ids=_texts(document.get("reference_context_ids")),
        offline_outcome=_text(document.get("offline_outcome")),
    )


class ResultsReader:
    def __init__(self, config: KafkaResultsConfig, writer: StoreWriter, since_s: float) -> None:
        if not config.bootstrap_servers:
            raise ValueError("the results reader needs results.bootstrap_servers")
        self.config, self._writer, self._since_s = config, writer, since_s
        self._stop = threading.Event()
        self._errors = RateLimitedLog(interval_s=30.0)
        self._thread = threading.Thread(target=self._run, name="ragpulse-page-results", daemon=True)
        self.assigned: set[TopicPartition] = set()

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stop.is_set():
            consumer = None
            try:
                consumer = KafkaConsumer(
                    bootstrap_servers=self.config.bootstrap_servers,
                    group_id=None,
                    enable_auto_commit=False,
                    **security_options(self.config.options),
                )
                self._follow(consumer)
            except Exception as exc:  # the broker is away, or a bug: the page keeps what it has
                self._errors.log(logger, exc, "reading %s for the page failed: %r", self.config.topic, exc)
                self._stop.wait(_RETRY_AFTER_S)
            finally:
                if consumer is not None:
                    consumer.close()
                self.assigned = set()

    def _follow(self, consumer: KafkaConsumer) -> None:
        topic, next_check = self.config.topic, 0.0
        while not self._stop.is_set():
            if time.monotonic() >= next_check:
                found = {TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()}
                new = sorted(found - self.assigned)
                if new:
                    consumer.assign(sorted(self.assigned | set(new)))
                    start_ms = int((time.time() - self._since_s) * 1000)
                    for partition, offset in offsets_at(consumer, new, start_ms).items():
                        consumer.seek(partition, offset)
                    self.assigned |= set(new)
                next_check = time.monotonic() + (_PARTITIONS_EVERY_S if self.assigned else 1.0)
            if not self.assigned:
                self._stop.wait(1.0)
                continue
            rows: list[StoredEvaluation | Correction] = []
            for messages in consumer.poll(timeout_ms=500, max_records=1000).values():
                for message in messages:
                    try:
                        rows.append(from_message(message.value, message.timestamp))
                    except (ValueError, TypeError, KeyError, OverflowError, RecursionError):
                        RESULTS_READ.labels("malformed").inc()
            if rows and self._writer.submit_waiting(rows, self._stop):
                RESULTS_READ.labels("stored").inc(len(rows))
