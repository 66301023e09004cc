"""Ingest on the real broker: every convention, split and batched records, bad input, consumer groups."""

from __future__ import annotations

from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import TopicPartition

from collector.pipeline.deadletter import REASON_HEADER
from collector.receivers.decode import decode, encode_json
from ragpulse_sdk import KafkaSpanExporter
from testkit.collector_runner import RunningCollector, wait_for
from testkit.rag_traces import BUILDERS, RagCase, encode, make_spans, provider


def _collector(bootstrap: str, topic: str, **extra) -> RunningCollector:
    return RunningCollector(**{"kafka.bootstrap_servers": bootstrap, "kafka.topic": topic, **extra})


def test_every_convention_through_kafka_span_exporter(kafka_bootstrap: str, topic: str) -> None:
    exporter = KafkaSpanExporter(kafka_bootstrap, topic)
    expected = {}
    for convention, build in BUILDERS.items():
        tp = provider(exporter, service=f"svc-{convention}")  # SimpleSpanProcessor: one record per span
        case = RagCase(query=f"question for {convention}?")
        build(tp, case)
        expected[case.query] = convention
    exporter.shutdown()
    with _collector(kafka_bootstrap, topic) as collector:
        wait_for(lambda: len(collector.records) >= 4, 60, "four records")
    by_query = {r["query"]: r for r in collector.records}
    assert {q: by_query[q]["convention"] for q in expected} == expected
    for record in collector.records:
        assert len(record["nodes"]) == 3 and record["service"].startswith("svc-")
    assert len(collector.records) == 4  # spans split across records were assembled, not split


def test_kafkaexporter_batched_records_proto_and_json(kafka_bootstrap: str, topic: str) -> None:
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    proto_batch = make_spans("openinference") + make_spans("gen_ai") + make_spans("openllmetry")
    producer.send(topic, encode(proto_batch))  # many traces in one record, no key
    producer.send(topic, encode_json(decode(encode(make_spans("ragpulse") + make_spans("gen_ai")))))
    producer.flush()
    with _collector(kafka_bootstrap, topic) as collector:
        wait_for(lambda: len(collector.records) >= 5, 60, "five records")
    assert sorted(r["convention"] for r in collector.records) == sorted(
        ["openinference", "gen_ai", "openllmetry", "ragpulse", "gen_ai"]
    )


def _bad_span_record(**attributes) -> bytes:
    from testkit.rag_traces import Collect

    collect = Collect()
    with provider(collect).get_tracer("t").start_as_current_span("answer") as span:
        span.set_attributes(attributes)
    return encode(collect.spans)


def test_bad_input_is_dead_lettered_and_consumption_goes_on(kafka_bootstrap: str, kafka_topic) -> None:
    topic = kafka_topic()
    good = encode(make_spans("ragpulse"))
    bad = {
        "malformed_protobuf": b"\x0a\xff\xff\xff\xff\x0f garbage",
        "truncated": good[:-9],
        "malformed_json": b'{"resourceSpans": [',
        "too_large": b"\x0a" + b"x" * 5000,
        "invalid_utf8": good.replace(b"rag.query", b"rag.\xffuery"),
        "wrong_type": _bad_span_record(**{"rag.query": 7, "rag.response": "a"}),
        "missing_attribute": _bad_span_record(**{"rag.query": "q"}),
        "invalid_retrieval_json": _bad_span_record(
            **{"rag.query": "q", "rag.response": "a", "rag.retrieval.documents": "[{oops"}
        ),
    }
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for value in bad.values():
        producer.send(topic, value)
    producer.send(topic, good)
    producer.flush()
    dlq = f"{topic}.dlq"
    with _collector(kafka_bootstrap, topic, **{"kafka.max_record_bytes": 4096}) as collector:
        wait_for(lambda: len(collector.records) >= 1, 60, "the good record after the bad ones")
        consumer = KafkaConsumer(
            dlq, bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=15_000
        )
        reasons = []
        for message in consumer:
            reasons.append(dict(message.headers)[REASON_HEADER].decode())
            if len(reasons) == len(bad):
                break
        consumer.close()
        group = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id="ragpulse")
        wait_for(
            lambda: group.committed(TopicPartition(topic, 0)) == len(bad) + 1, 30, "commit past everything"
        )
        group.close()
    assert sorted(reasons) == sorted(
        [
            "malformed_protobuf",
            "malformed_protobuf",
            "malformed_json",
            "too_large",
            "invalid_utf8",
            "wrong_type",
            "missing_attribute",
            "invalid_retrieval_json",
        ]
    )


def test_two_consumers_in_one_group_share_partitions(kafka_bootstrap: str, kafka_topic) -> None:
    """Once the group is stable, each trace is assembled by exactly one of the two consumers."""
    topic = kafka_topic(partitions=4)
    group = {"kafka.group_id": f"group-{topic}"}
    with (
        _collector(kafka_bootstrap, topic, **group) as first,
        _collector(kafka_bootstrap, topic, **group) as second,
    ):
        receivers = [first.service.receiver, second.service.receiver]
        wait_for(
            lambda: (
                sum(len(r.assignment()) for r in receivers) == 4 and all(r.assignment() for r in receivers)
            ),
            60,
            "partitions split between both consumers",
        )
        exporter = KafkaSpanExporter(kafka_bootstrap, topic)
        tp = provider(exporter)
        for i in range(100):
            BUILDERS["ragpulse"](tp, RagCase(query=f"q{i}"))
        exporter.shutdown()
        wait_for(
            lambda: len(first.records) + len(second.records) >= 100, 90, "100 records across two consumers"
        )
    queries = [r["query"] for r in first.records + second.records]
    assert sorted(queries) == sorted(f"q{i}" for i in range(100))  # none lost, none twice
    assert first.records and second.records  # both consumers got partitions
