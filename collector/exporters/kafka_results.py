"""Evaluation results as JSON on a Kafka topic, for warehouses, notebooks and other consumers.

One record per metric per trace, keyed by the trace id, so every result of a trace lands on the
same partition in order and a compacting or joining consumer can key on it. A result holds the score,
the verdicts behind it, the cause of a failure and (unless `hide_texts`) the question, answer and
passages, so a consumer, and the page of every replica, can show it without the trace. Sends go through a
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
from collector.exporters import explanation, score_label
from collector.exporters.kafka_writer import KafkaWriter, WriterFull
from collector.exporters.verdicts import VerdictLimits, verdict_documents
from collector.logs import RateLimitedLog
from collector.metrics import EXPORT_ERRORS
from collector.pipeline.offsets import offsets_at
from collector.receivers.kafka_options import security_options
from collector.records import RagRecord
from collector.review import corrections
from collector.review.corrections import Correction
from collector.sampling.dedup import Answer, evaluation_key
from collector.stages import Evaluation, Outcome

logger = logging.getLogger(__name__)

CONTENT_TYPE_HEADER = ("content-type", b"application/json")


class KafkaResultsConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

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
    max_text_chars: int = Field(
        4000, ge=0, description="The question, the answer and each passage are cut to this many characters."
    )
    max_passages: int = Field(
        20,
        ge=0,
        description="Passages per result, in retrieval order (the judge sees 20 by default); the rest are "
        "counted in `passages_truncated`, not sent.",
    )


def rfc3339(unix_s: float) -> str:
    return datetime.fromtimestamp(unix_s, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def result_document(
    record: RagRecord,
    evaluation: Evaluation,
    evaluated_at: float,
    config: KafkaResultsConfig | None = None,
    verdicts: VerdictLimits | None = None,
    hide_texts: bool = False,
) -> dict[str, Any]:
    """The JSON value of one result record (stable field names: consumers depend on them).

    Each result carries what a reader needs to show it without the trace: the verdicts, the cause and,
    unless `hide_texts`, the question, the answer and the passages (cut to `max_text_chars`). With
    `hide_texts` the passages keep their ids, scores and relevance, and `reason` is a count of the
    verdicts (the judge's reasons quote the texts)."""
    config = config or KafkaResultsConfig()
    measured = evaluation.outcome in (Outcome.PASSED, Outcome.FAILED)
    documents, verdicts_left_out = verdict_documents(
        evaluation.verdicts, verdicts or VerdictLimits(), "kafka", hide_texts
    )
    document: dict[str, Any] = {
        "trace_id": record.trace_id,
        "span_id": record.anchor_span_id,
        "metric": evaluation.metric,
        "score": evaluation.score,
        "outcome": score_label(evaluation.outcome),
        "passed": evaluation.outcome is Outcome.PASSED if measured else None,
        "reason": explanation(evaluation, hide_texts),
        "cause": evaluation.cause,
        "threshold": evaluation.threshold,
        "lower_is_better": evaluation.lower_is_better,
        "judge": evaluation.judge,
        "judge_model": evaluation.judge_model,
        # the cascade's offline outcome when the LLM judge re-scored this metric, else null
        "offline_outcome": None if evaluation.offline_outcome is None else evaluation.offline_outcome.value,
        "tokens": evaluation.tokens,
        "cost_usd": evaluation.cost_usd,
        "duration_s": evaluation.duration_s,
        "service": record.service,
        "route": record.route,
        "model": record.model,
        "service_version": record.service_version or None,  # the app's `service.version`
        "prompt_version": record.prompt_version or None,
        "conversation_id": record.conversation_id or None,
        # what the reference metrics read: ids are kept with hide_texts, texts are not
        "reference_context_ids": list(record.reference_context_ids) or None,
        "evaluated_at": rfc3339(evaluated_at),
        "ragpulse_version": __version__,
        "verdicts": documents,
        "verdicts_truncated": verdicts_left_out,
    }
    if not hide_texts:
        document["question"] = record.query[: config.max_text_chars]
        document["answer"] = record.response[: config.max_text_chars]
        for name, text in (
            ("expected_output", record.expected_output),
            ("baseline_output", record.baseline_output),
        ):
            document[name] = None if text is None else text[: config.max_text_chars]
        document["reference_contexts"] = [
            t[: config.max_text_chars] for t in record.reference_contexts
        ] or None
    document["passages"] = passage_documents(record, evaluation, config, hide_texts)
    document["passages_truncated"] = max(0, len(record.nodes) - config.max_passages)
    return document


def passage_documents(
    record: RagRecord, evaluation: Evaluation, config: KafkaResultsConfig, hide_texts: bool
) -> list[dict[str, Any]]:
    """The retrieved passages in retrieval order (the verdicts' `passages` index into them), each with
    the retriever's score and, where a metric judged it, "relevant" or "irrelevant"."""
    relevance = evaluation.passage_relevance
    passages: list[dict[str, Any]] = []
    for index, node in enumerate(record.nodes[: config.max_passages]):
        passage: dict[str, Any] = {
            "id": node.id,
            "score": node.score,
            "relevance": relevance[index] if index < len(relevance) else None,
        }
        if not hide_texts:
            passage["text"] = node.text[: config.max_text_chars]
        passages.append(passage)
    return passages


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
            document = result_document(
                record, evaluation, evaluated_at, self.config, self.verdict_limits, self.hide_texts
            )
            value = json.dumps(document, ensure_ascii=False)

            def failed(exc: BaseException, metric: str = evaluation.metric) -> None:
                self._failed(record, metric, exc)

            try:
                self._writer.send(
                    self.config.topic, value.encode(), key, [CONTENT_TYPE_HEADER], on_failed=failed
                )
            except WriterFull as exc:
                failed(exc)

    def publish_correction(self, correction: Correction) -> None:
        """A reviewer's correction beside the results (keyed by trace, like them): every replica's page
        and `ragpulse export-cases` read it from here."""
        value = json.dumps(corrections.document(correction, self.hide_texts), ensure_ascii=False).encode()

        def failed(exc: BaseException) -> None:
            EXPORT_ERRORS.labels("kafka").inc()
            self._failures.log(logger, exc, "correction not written to %s: %r", self.config.topic, exc)

        try:
            self._writer.send(
                self.config.topic,
                value,
                correction.trace_id.encode(),
                [CONTENT_TYPE_HEADER],
                on_failed=failed,
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

    @property
    def delivering(self) -> bool:
        """False while a result has waited for the broker for over a minute (an outage, a stall)."""
        return self._writer.delivering

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
) -> list[tuple[Answer, str]]:
    """((trace id, span id), metric) of every result written in the last `window_s` seconds.

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
    keys: list[tuple[Answer, str]] = []
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
                        if document.get("type") == corrections.DOCUMENT_TYPE:  # a reviewer's, not a result
                            continue
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
