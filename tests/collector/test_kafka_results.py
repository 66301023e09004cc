"""Evaluation results on a real Kafka topic, read back with a real consumer."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest
from kafka import KafkaConsumer

from collector import __version__
from collector.exporters.kafka_results import KafkaResultsConfig, KafkaResultsExporter
from collector.exporters.verdicts import VerdictLimits
from collector.metrics import EXPORT_ERRORS, VERDICTS_TRUNCATED
from collector.records import RagRecord, RetrievedNode
from collector.stages import Evaluation, Outcome
from evaluators import VerdictRecord

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
        service_version="2025.06.1",
        prompt_version="answer-v3",
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
        "cause": None,
        "threshold": 0.5,
        "lower_is_better": False,
        "judge": "offline",
        "judge_model": "wordllama",
        "offline_outcome": None,
        "tokens": 0,
        "cost_usd": 0.0,
        "duration_s": 0.01,
        "service": "rag-api",
        "route": "/api/ask",
        "model": "gpt-4o-mini",
        "service_version": "2025.06.1",
        "prompt_version": "answer-v3",
        "conversation_id": "session-7",
        "reference_context_ids": None,
        "evaluated_at": "2026-09-21T14:13:20.250Z",
        "ragpulse_version": __version__,
        "verdicts": [],
        "verdicts_truncated": 0,
        "question": "Wie hoch ist die Zugspitze?",
        "answer": "Die Zugspitze ist 2962 m hoch.",
        "expected_output": None,
        "baseline_output": None,
        "reference_contexts": None,
        "passages": [
            {
                "id": "d1",
                "score": 0.9,
                "relevance": None,
                "text": "Die Zugspitze ist mit 2962 m der höchste Berg Deutschlands.",
            }
        ],
        "passages_truncated": 0,
    }
    assert datetime.fromisoformat(str(values["hallucination"]["evaluated_at"])).tzinfo is not None
    assert values["hallucination"]["passed"] is False
    assert values["hallucination"]["lower_is_better"] is True
    assert values["answer_relevancy"]["score"] is None
    assert values["answer_relevancy"]["passed"] is None
    assert values["answer_relevancy"]["outcome"] == "error"


CLAIMS = (
    VerdictRecord(
        kind="claim",
        item="Die Zugspitze ist 2962 m hoch.",
        verdict="yes",
        check="supported",
        supporting_ids=[0],
    ),
    VerdictRecord(
        kind="claim",
        item="Sie liegt in Österreich.",
        verdict="no",
        check="supported",
        reason="d2: an der Grenze, in Bayern",
        supporting_ids=[1],
    ),
    VerdictRecord(kind="claim", item="Sie ist alt.", verdict="idk", check="supported"),
)


def failed_faithfulness() -> Evaluation:
    return replace(
        make_evaluation("faithfulness", Outcome.FAILED, 1 / 3, "1 von 3 belegt: Österreich ist falsch."),
        judge="openai",
        judge_model="gpt-4o-mini",
        cause="contradicted_claim",
        verdicts=CLAIMS,
        passage_relevance=("relevant", "irrelevant", None),
        tokens=1234,
        cost_usd=0.0021,
    )


def three_passages() -> RagRecord:
    return replace(
        make_record(),
        query="Wie hoch ist die Zugspitze? " * 10,
        nodes=(
            RetrievedNode("d1", "Die Zugspitze ist mit 2962 m der höchste Berg Deutschlands.", 0.9),
            RetrievedNode("d2", "Die Zugspitze liegt an der Grenze zu Österreich, in Bayern.", 0.7),
            RetrievedNode("d3", "Garmisch-Partenkirchen liegt am Fuß des Berges.", None),
        ),
    )


def export_and_read(kafka_bootstrap: str, topic: str, hide_texts: bool, **config: Any) -> dict[str, Any]:
    exporter = KafkaResultsExporter(
        KafkaResultsConfig(bootstrap_servers=kafka_bootstrap, topic=topic, **config),
        VerdictLimits(max_items=2),
        hide_texts=hide_texts,
    )
    exporter.export(three_passages(), [failed_faithfulness()])
    assert exporter.force_flush(10.0)
    exporter.shutdown()
    ((_, document, _),) = read_all(kafka_bootstrap, topic, 1)
    return document


def test_a_result_carries_its_verdicts_cause_spend_and_texts(kafka_bootstrap: str, topic: str) -> None:
    """A consumer (and the page of every replica) shows the failure without the trace: which claim was
    contradicted by which passage, the cause, what the judge spent, and the texts it judged."""
    before = VERDICTS_TRUNCATED.labels("kafka")._value.get()
    document = export_and_read(kafka_bootstrap, topic, False, max_text_chars=20, max_passages=2)

    assert document["outcome"] == "failed"
    assert document["passed"] is False
    assert document["cause"] == "contradicted_claim"
    assert document["tokens"] == 1234
    assert document["cost_usd"] == pytest.approx(0.0021)
    assert document["reason"] == "1 von 3 belegt: Österreich ist falsch."
    assert document["verdicts"] == [
        {
            "kind": "claim",
            "verdict": "supported",
            "passages": [0],
            "item": "Die Zugspitze ist 2962 m hoch.",
            "reason": "",
        },
        {
            "kind": "claim",
            "verdict": "contradicted",
            "passages": [1],
            "item": "Sie liegt in Österreich.",
            "reason": "d2: an der Grenze, in Bayern",
        },
    ]
    assert document["verdicts_truncated"] == 1  # max_items=2 of 3, and counted
    assert VERDICTS_TRUNCATED.labels("kafka")._value.get() == before + 1
    assert document["question"] == "Wie hoch ist die Zug"  # max_text_chars=20
    assert document["answer"] == "Die Zugspitze ist 29"
    assert document["passages"] == [  # in retrieval order: the verdicts' `passages` index into them
        {"id": "d1", "score": 0.9, "relevance": "relevant", "text": "Die Zugspitze ist mi"},
        {"id": "d2", "score": 0.7, "relevance": "irrelevant", "text": "Die Zugspitze liegt "},
    ]
    assert document["passages_truncated"] == 1  # max_passages=2 of 3


def test_hide_texts_keeps_ids_scores_and_verdicts_only(kafka_bootstrap: str, topic: str) -> None:
    document = export_and_read(kafka_bootstrap, topic, True)

    assert "question" not in document and "answer" not in document
    assert document["passages"] == [
        {"id": "d1", "score": 0.9, "relevance": "relevant"},
        {"id": "d2", "score": 0.7, "relevance": "irrelevant"},
        {"id": "d3", "score": None, "relevance": None},
    ]
    assert document["verdicts"] == [
        {"kind": "claim", "verdict": "supported", "passages": [0]},
        {"kind": "claim", "verdict": "contradicted", "passages": [1]},
    ]
    assert (
        document["reason"] == "3 claims: 1 supported, 1 contradicted, 1 not_found; cause: contradicted_claim"
    )
    assert document["cause"] == "contradicted_claim"
    every_value = json.dumps(document, ensure_ascii=False)
    for text in ("Zugspitze", "Österreich", "Bayern", "Sie ist alt", "Garmisch"):
        assert text not in every_value


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
