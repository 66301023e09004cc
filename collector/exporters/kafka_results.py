"""Evaluation results as JSON on a Kafka topic, for warehouses, notebooks and other consumers.

One record per metric per trace, keyed by the trace id, so every result of a trace lands on the
same partition in order and a compacting or joining consumer can key on it. Sends go through a
`KafkaWriter` (its own thread, a bounded queue): failures and a full queue are logged and
counted, never raised nor waited out, so a slow or stalled results topic cannot stall evaluation.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from kafka import KafkaConsumer
from kafka.errors import KafkaError
from kafka.structs import TopicPartition
from pydantic import BaseModel, ConfigDict, Field

from collector import __version__
from collector.dedup import evaluation_key
from collector.kafka_options import security_options
from collector.kafka_writer import KafkaWriter, WriterFull
from collector.logs import RateLimitedLog
from collector.metrics import EXPORT_ERRORS
from collector.offsets import offsets_at
from collector.records import RagRecord
from collector.stages import Evaluation, Outcome
from collector.verdicts import VerdictLimits

logger = logging.getLogger(__name__)

CONTENT_TYPE_HEADER = ("content-type", b"application/json")


class KafkaResultsConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    bootstrap_servers: str | None = Field(None, description="host:port[,host:port]; unset = disabled.")
    topic: str = "ragpulse_evaluations"
    max_queued: int = Field(
        10_000, ge=1, description="Results waiting for the broker; beyond it they are counted and dropped."
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Passed to kafka-python's KafkaProducer untouched: acks, linger_ms, compression_type, "
        "security_protocol, sasl_*, ssl_*, client_id, ...",
    )


def rfc3339(unix_s: float) -> str:
    return datetime.fromtimestamp(unix_s, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def result_document(record: RagRecord, evaluation: Evaluation, evaluated_at: float) -> dict[str, Any]:
    """The JSON value of one result record (stable field names: consumers depend on them)."""
    measured = evaluation.outcome in (Outcome.PASSED, Outcome.FAILED)
    return {
        "trace_id": record.trace_id,
        "span_id": record.anchor_span_id,
        "metric": evaluation.metric,
        "score": evaluation.score,
        "outcome": evaluation.outcome.value,
        "passed": evaluation.outcome is Outcome.PASSED if measured else None,
        "reason": evaluation.reason,
        "threshold": evaluation.threshold,
        "lower_is_better": evaluation.lower_is_better,
        "judge": evaluation.judge,
        "judge_model": evaluation.judge_model,
        "duration_s": evaluation.duration_s,
        "service": record.service,
        "route": record.route,
        "model": record.model,
        "conversation_id": record.conversation_id or None,
        "evaluated_at": rfc3339(evaluated_at),
        "ragpulse_version": __version__,
    }


class KafkaResultsExporter:
    name = "kafka"

    def __init__(
        self,
        config: KafkaResultsConfig,
        verdicts: VerdictLimits | None = None,
        hide_texts: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not config.bootstrap_servers:
            raise ValueError("the Kafka results exporter needs bootstrap_servers")
        self.config = config
        self.verdict_limits, self.hide_texts = verdicts or VerdictLimits(), hide_texts
        self._clock = clock
        # Raises NoBrokersAvailable at start when the brokers cannot be reached: a clear error early.
        self._writer = KafkaWriter(
            config.bootstrap_servers, "results", max_queued=config.max_queued, **config.options
        )
        self._closed = False
        self._failures = RateLimitedLog(interval_s=10.0)

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        if self._closed:
            return
        evaluated_at = self._clock()
        key = record.trace_id.encode()
        for evaluation in evaluations:
            value = json.dumps(result_document(record, evaluation, evaluated_at), ensure_ascii=False)

            def failed(exc: BaseException, metric: str = evaluation.metric) -> None:
                self._failed(record, metric, exc)

            try:
                self._writer.send(
                    self.config.topic, value.encode(), key, [CONTENT_TYPE_HEADER], on_failed=failed
                )
            except WriterFull as exc:
                failed(exc)

    def _failed(self, record: RagRecord, metric: str, exc: BaseException) -> None:
        EXPORT_ERRORS.labels("kafka").inc()
        self._failures.log(
            logger,
            exc,
            "result not written to %s: trace=%s metric=%s: %r",
            self.config.topic,
            record.trace_id,
            metric,
            exc,
        )

    @property
    def saturated(self) -> bool:
        """Nine tenths of `max_queued` wait for the broker: evaluation waits for it."""
        return self._writer.pending >= self.config.max_queued * 0.9

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        """True when every queued result was answered by the broker (failures are counted apart)."""
        if self._closed:
            return True
        if not self._writer.flush(timeout_s):
            logger.warning("results flush to %s did not finish in %.0fs", self.config.topic, timeout_s)
            return False
        return True

    def shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            self._writer.close(timeout_s=10)


def recent_results(
    config: KafkaResultsConfig, window_s: float, deadline_s: float = 20.0
) -> list[tuple[str, str]]:
    """(trace id, metric) of every result written in the last `window_s` seconds.

    A restarted replica re-reads the records whose offsets were not yet committed when it stopped;
    seeding its duplicate filter with what the results topic already holds keeps it from scoring
    them twice. Bounded by `deadline_s`: a slow read costs duplicates, never a stalled start.
    """
    consumer = KafkaConsumer(
        bootstrap_servers=config.bootstrap_servers,
        group_id=None,
        enable_auto_commit=False,
        **security_options(config.options),
    )
    keys: list[tuple[str, str]] = []
    try:
        partitions = [
            TopicPartition(config.topic, p) for p in consumer.partitions_for_topic(config.topic) or ()
        ]
        if not partitions:
            return keys
        consumer.assign(partitions)
        for tp, begin in offsets_at(consumer, partitions, int((time.time() - window_s) * 1000)).items():
            consumer.seek(tp, begin)
        ends = consumer.end_offsets(partitions)
        deadline = time.monotonic() + deadline_s
        while any(consumer.position(tp) < ends[tp] for tp in partitions) and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                for message in batch:
                    try:
                        document = json.loads(message.value)
                        keys.append(
                            evaluation_key(
                                str(document["trace_id"]), str(document["span_id"]), str(document["metric"])
                            )
                        )
                    except (ValueError, KeyError, TypeError):
                        continue  # not ours, or not JSON: nothing to suppress
    except KafkaError as exc:
        logger.warning(
            "could not read recent results from %s (%r); duplicates are possible", config.topic, exc
        )
    finally:
        consumer.close()
    return keys
