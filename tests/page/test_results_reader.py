"""The group view on a real broker: results documents on the topic reach every replica's store."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable

from kafka import KafkaProducer

from collector.exporters.kafka_results import KafkaResultsConfig, KafkaResultsExporter
from collector.page.app import Page
from collector.page.config import PageConfig
from collector.page.metrics import RESULTS_READ
from collector.page.queries import detail
from collector.page.results_reader import from_message
from tests.page.factories import faithfulness, make_record, relevancy


def document(trace_id: str, metric: str = "faithfulness", **fields: object) -> dict[str, object]:
    """A results document in the extended shape (verdicts, cause, texts, passages)."""
    return {
        "trace_id": trace_id,
        "span_id": "00f067aa0ba902b7",
        "metric": metric,
        "score": 0.5,
        "outcome": "failed",
        "passed": False,
        "reason": "1 of 2 claims supported",
        "threshold": 0.7,
        "lower_is_better": False,
        "judge": "openai",
        "judge_model": "gpt-4o-mini",
        "duration_s": 0.3,
        "service": "shop",
        "route": "/ask",
        "model": "gpt-4o-mini",
        "evaluated_at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "cause": "contradicted_claim",
        "verdicts": [
            {
                "kind": "claim",
                "item": "It opened in 1889.",
                "verdict": "supported",
                "passages": [0],
                "reason": "",
            },
            {"kind": "claim", "item": "It is 512 m tall.", "verdict": "contradicted", "passages": [1]},
        ],
        "verdicts_truncated": 0,
        "tokens": 700,
        "cost_usd": 0.0002,
        "question": "How tall is the tower?",
        "answer": "It opened in 1889. It is 512 m tall.",
        "passages": [
            {"id": "doc-a", "score": 0.9, "text": "Opened in 1889.", "relevance": "relevant"},
            {"id": "doc-b", "score": 0.8, "text": "It is 330 m tall."},
        ],
        **fields,
    }


def wait_for(condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def stored_traces(page: Page) -> set[str]:
    with page.store.reader() as db:
        return {row[0] for row in db.execute("SELECT trace_id FROM records")}


def test_every_replica_reads_the_whole_topic(kafka_bootstrap: str, kafka_topic) -> None:  # type: ignore[no-untyped-def]
    topic = kafka_topic(partitions=3)
    results = KafkaResultsConfig(bootstrap_servers=kafka_bootstrap, topic=topic)
    config = PageConfig(retention_hours=1.0)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    stale = uuid.uuid4().hex  # written two hours ago: outside the retention window, never read
    producer.send(
        topic,
        json.dumps(document(stale)).encode(),
        stale.encode(),
        timestamp_ms=int((time.time() - 7200) * 1000),
    )
    fresh = [uuid.uuid4().hex for _ in range(6)]
    for trace_id in fresh:
        producer.send(topic, json.dumps(document(trace_id)).encode(), trace_id.encode())
    old = uuid.uuid4().hex  # a document from before verdicts and texts travelled with the score
    old_fields = (
        "cause",
        "verdicts",
        "verdicts_truncated",
        "tokens",
        "cost_usd",
        "question",
        "answer",
        "passages",
    )
    producer.send(topic, json.dumps({k: v for k, v in document(old).items() if k not in old_fields}).encode())
    malformed_before = RESULTS_READ.labels("malformed")._value.get()
    for junk in (b"not json", b"[1, 2]", json.dumps({"trace_id": "x"}).encode(), b"[" * 100_000):
        producer.send(topic, junk)
    producer.flush()
    producer.close()

    pages = [Page(config, results) for _ in range(2)]  # two replicas
    for page in pages:
        page.start()
    try:
        # Replica 1 also exports its own result, which comes back from the topic: stored once.
        own = make_record()
        exporter = KafkaResultsExporter(results)
        exporter.export(own, [faithfulness(), relevancy()])
        assert exporter.force_flush(10)
        exporter.shutdown()
        pages[0].exporter.export(own, [faithfulness(), relevancy()])
        expected = {*fresh, old, own.trace_id}
        for page in pages:
            wait_for(lambda page=page: stored_traces(page) == expected)
        assert RESULTS_READ.labels("malformed")._value.get() - malformed_before >= 4 * 2
        with pages[1].store.reader() as db:
            view = detail(db, fresh[0], "00f067aa0ba902b7")
            legacy = detail(db, old, "00f067aa0ba902b7")
            ours = detail(db, own.trace_id, own.anchor_span_id)
            (count,) = db.execute("SELECT COUNT(*) FROM evaluations").fetchone()
        assert count == 6 + 1 + 2
        assert view is not None and view["question"] == "How tall is the tower?"
        assert [(p["id"], p["relevance"], p["contradicts"]) for p in view["passages"]] == [
            ("doc-a", "relevant", False),
            ("doc-b", None, True),
        ]
        (evaluation,) = view["evaluations"]
        assert evaluation["cause"] == "contradicted_claim" and evaluation["tokens"] == 700
        assert evaluation["verdicts"][1] == {
            "kind": "claim", "verdict": "contradicted", "passages": [1], "item": "It is 512 m tall."
        }  # fmt: skip
        assert legacy is not None and legacy["passages"] == [] and legacy["question"] is None
        assert legacy["evaluations"][0]["score"] == 0.5 and legacy["evaluations"][0]["verdicts"] == []
        # The real exporter's documents carry what the page shows (the results JSON contract).
        assert ours is not None and ours["service"] == "shop"
        assert {e["metric"] for e in ours["evaluations"]} == {"faithfulness", "answer_relevancy"}
        assert ours["question"] == own.query and ours["answer"] == own.response
        assert [(p["id"], p["text"], p["relevance"]) for p in ours["passages"]] == [
            (n.id, n.text, r) for n, r in zip(own.nodes, ("relevant", "relevant", "irrelevant"), strict=True)
        ]
        faith = ours["evaluations"][1]
        assert faith["score"] == 0.5 and faith["cause"] == "contradicted_claim" and faith["tokens"] == 812
        assert faith["verdicts"][1]["verdict"] == "contradicted" and faith["verdicts"][1]["passages"] == [1]
    finally:
        for page in pages:
            page.close()
    assert not any(page.reader.alive for page in pages if page.reader is not None)


def test_lenient_parsing() -> None:
    minimal = from_message(
        json.dumps({"trace_id": "t", "span_id": "s", "metric": "m", "outcome": "error"}).encode(),
        1_700_000_000_000,
    )
    assert minimal.score is None and minimal.evaluated_at == 1_700_000_000 and minimal.passages is None
    assert minimal.conversation_id == ""
    turn = from_message(json.dumps(document("t", conversation_id="chat-9")).encode(), 5_000)
    assert turn.conversation_id == "chat-9"  # the conversation view works in the group view too
    odd = from_message(
        json.dumps(
            document(
                "t",
                score="high",
                tokens=None,
                evaluated_at="yesterday",
                verdicts=[None, {"verdict": "supported", "passages": ["x", 1, -2]}],
                passages=[{"id": 7}, "junk"],
            )
        ).encode(),
        5_000,
    )
    assert odd.score is None and odd.tokens == 0 and odd.evaluated_at == 5.0
    assert odd.verdicts == ({"kind": "", "verdict": "supported", "passages": [1]},)
    assert [p.id for p in odd.passages or ()] == ["7", ""]
