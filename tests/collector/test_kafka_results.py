"""Evaluation results on a real Kafka topic, read back with a real consumer."""

from __future__ import annotations

import json
from datetime import datetime

from kafka import KafkaConsumer

from collector import __version__
from collector.exporters.kafka_results import KafkaResultsConfig, KafkaResultsExporter
from collector.metrics import EXPORT_ERRORS
from collector.records import RagRecord, RetrievedNode
from collector.stages import Evaluation, Outcome

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
EVALUATED_AT = 1_790_000_000.25  # 2026-09-21T14:13:20.250Z


def make_record() -> RagRecord:
    return RagRecord(
        trace_id=TRACE_ID,
        anchor_span_id="00f067aa0ba902b7",
        query="Wie hoch ist die Zugspitze?",
        response="Die Zugspitze ist 2962 m hoch.",
        nodes=(RetrievedNode("d1", "Die Zugspitze ist mit 2962 m der höchste Berg Deutschlands.", 0.9),),
        service="rag-api",
        route="/api/ask",
        model="gpt-4o-mini",
        conversation_id="session-7",
    )


def make_evaluation(metric: str, outcome: Outcome, score: float | None, reason: str) -> Evaluation:
    return Evaluation(
        metric=metric,
        outcome=outcome,
        score=score,
        reason=reason,
        threshold=0.5,
        lower_is_better=metric == "hallucination",
        judge="offline",
        judge_model="wordllama",
        duration_s=0.01,
    )


def read_all(bootstrap: str, topic: str, count: int) -> list[tuple[bytes, dict[str, object], list]]:
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=None,
        auto_offset_reset="earliest",
        consumer_timeout_ms=10_000,
    )
    try:
        records = []
        for message in consumer:
            records.append((message.key, json.loads(message.value), message.headers))
            if len(records) == count:
                break
        return records
    finally:
        consumer.close()


def test_one_json_record_per_metric_keyed_by_trace_id(kafka_bootstrap: str, topic: str) -> None:
    evaluations = [
        make_evaluation("faithfulness", Outcome.PASSED, 1.0, "Alle Aussagen sind belegt."),
        make_evaluation("hallucination", Outcome.FAILED, 0.75, "3 of 4 contexts contradicted"),
        make_evaluation("answer_relevancy", Outcome.ERROR, None, "judge returned invalid JSON"),
    ]
    exporter = KafkaResultsExporter(
        KafkaResultsConfig(bootstrap_servers=kafka_bootstrap, topic=topic, options={"linger_ms": 5}),
        clock=lambda: EVALUATED_AT,
    )
    exporter.export(make_record(), evaluations)
    assert exporter.force_flush(10.0)
    exporter.shutdown()

    records = read_all(kafka_bootstrap, topic, len(evaluations))
    assert [key for key, _, _ in records] == [TRACE_ID.encode()] * 3
    assert all(headers == [("content-type", b"application/json")] for _, _, headers in records)
    values = {value["metric"]: value for _, value, _ in records}
    assert list(values) == ["faithfulness", "hallucination", "answer_relevancy"]  # in order
    assert values["faithfulness"] == {
        "trace_id": TRACE_ID,
        "span_id": "00f067aa0ba902b7",
        "metric": "faithfulness",
        "score": 1.0,
        "outcome": "passed",
        "passed": True,
        "reason": "Alle Aussagen sind belegt.",
        "threshold": 0.5,
        "lower_is_better": False,
        "judge": "offline",
        "judge_model": "wordllama",
        "duration_s": 0.01,
        "service": "rag-api",
        "route": "/api/ask",
        "model": "gpt-4o-mini",
        "conversation_id": "session-7",
        "evaluated_at": "2026-09-21T14:13:20.250Z",
        "ragpulse_version": __version__,
    }
    assert datetime.fromisoformat(str(values["hallucination"]["evaluated_at"])).tzinfo is not None
    assert values["hallucination"]["passed"] is False
    assert values["hallucination"]["lower_is_better"] is True
    assert values["answer_relevancy"]["score"] is None
    assert values["answer_relevancy"]["passed"] is None
    assert values["answer_relevancy"]["outcome"] == "error"


def test_send_failure_is_counted_not_raised(kafka_bootstrap: str, topic: str) -> None:
    # Producer options pass through: a 300-byte request limit makes the long result unsendable.
    config = KafkaResultsConfig(
        bootstrap_servers=kafka_bootstrap, topic=topic, options={"max_request_size": 300}
    )
    exporter = KafkaResultsExporter(config)
    before = EXPORT_ERRORS.labels("kafka")._value.get()
    evaluations = [make_evaluation("faithfulness", Outcome.FAILED, 0.0, "why " * 200)]
    exporter.export(make_record(), evaluations)
    assert exporter.force_flush(10.0)
    exporter.shutdown()
    exporter.export(make_record(), evaluations)  # after shutdown: a no-op, not an error
    assert EXPORT_ERRORS.labels("kafka")._value.get() == before + 1
