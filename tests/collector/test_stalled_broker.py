"""A broker that stops answering must not stop evaluation: dead letters and results are sent from
their own threads, and nothing they queue is lost once the broker answers again.

The broker here is a second one, frozen with SIGSTOP (it accepts connections and answers nothing),
so the session's broker keeps serving the other tests.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.structs import TopicPartition

from collector.pipeline.deadletter import REASON_HEADER, KafkaDeadLetters
from collector.stages import DeadLetter
from testkit.collector_runner import RunningCollector, wait_for
from testkit.kafka_broker import FaultyBroker
from testkit.kafka_read import committed_offsets
from testkit.otlp import post_traces
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.scrape import scrape


def _topic(broker: FaultyBroker, name: str) -> str:
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics({name: {"num_partitions": 1, "replication_factor": 1}}, wait_for_metadata=True)
    finally:
        admin.close()
    return name


def _read_all(broker: FaultyBroker, topic: str, expected: int) -> list:
    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest")
    records: list = []
    try:
        for _ in range(50):
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend(batch)
            if len(records) >= expected:
                break
    finally:
        consumer.close()
    return records


def test_dead_letters_are_queued_while_the_broker_is_frozen_and_written_after(
    faulty_broker: FaultyBroker,
) -> None:
    topic = _topic(faulty_broker, "stalled-dead-letters")
    sink = KafkaDeadLetters(faulty_broker.bootstrap, topic)
    first = threading.Event()
    sink.write(DeadLetter("malformed_protobuf", "warm-up", b"0", b"k0", "kafka"), first.set)
    wait_for(first.is_set, 30, "the first dead letter")
    written: list[int] = []
    faulty_broker.freeze()
    try:

        def write_many() -> None:
            for i in range(1, 51):
                letter = DeadLetter(
                    "malformed_protobuf", f"record {i}", f"{i}".encode(), f"k{i}".encode(), "kafka"
                )
                sink.write(letter, lambda i=i: written.append(i))

        writer = threading.Thread(target=write_many)
        writer.start()
        writer.join(20)  # the old sink waited up to 30 s on each send: 50 letters would take 25 minutes
        assert not writer.is_alive(), "writing dead letters waited for the frozen broker"
        assert written == []  # none is acknowledged before the broker has it: their offsets stay held
    finally:
        faulty_broker.resume()
    wait_for(lambda: len(written) == 50, 60, "the queued dead letters after the broker resumed")
    sink.close()
    records = _read_all(faulty_broker, topic, 51)
    assert sorted(r.value for r in records) == sorted(f"{i}".encode() for i in range(51))
    assert all(dict(r.headers)[REASON_HEADER] == b"malformed_protobuf" for r in records)


def _trace(i: int) -> bytes:
    case = RagCase()
    case.query = f"{case.query} (request {i})"
    return encode(make_spans("openinference", case))


def test_evaluation_goes_on_while_the_results_broker_is_frozen(faulty_broker: FaultyBroker) -> None:
    topic = _topic(faulty_broker, "stalled-results")
    overrides = {
        "results.bootstrap_servers": faulty_broker.bootstrap,
        "results.topic": topic,
        "sampling.metrics": ["faithfulness"],
        "assembly.quiet_period_s": 0.1,
    }
    with RunningCollector(evaluate=True, **overrides) as collector:
        port, metrics = collector.service.receiver.port, collector.service.status.port  # type: ignore[attr-defined]

        before = scrape(metrics).value("ragpulse_evaluations_total", metric="faithfulness")

        def evaluated() -> float:  # the registry is the process's: other tests counted before
            return scrape(metrics).value("ragpulse_evaluations_total", metric="faithfulness") - before

        assert post_traces(port, _trace(0))[0] == 200
        wait_for(lambda: evaluated() == 1, 60, "the first evaluation")
        faulty_broker.freeze()
        try:
            for i in range(1, 21):
                assert post_traces(port, _trace(i))[0] == 200
            wait_for(lambda: evaluated() == 21, 60, "evaluations while the results broker is frozen")
        finally:
            faulty_broker.resume()
        documents = [json.loads(r.value) for r in _read_all(faulty_broker, topic, 21)]
    assert len(documents) == 21  # the results queued while it was frozen reached the topic
    assert {d["metric"] for d in documents} == {"faithfulness"}


def test_offsets_wait_until_the_results_topic_has_the_scores(
    kafka_bootstrap: str, kafka_topic, faulty_broker: FaultyBroker
) -> None:
    """Offsets move only past what every exporter confirmed: with the results broker frozen, the spans
    are evaluated but their offsets stay uncommitted; once it answers, the results arrive (retried,
    not dropped) and the offsets follow."""
    spans_topic = kafka_topic()
    results_topic = _topic(faulty_broker, f"held-results-{uuid.uuid4().hex[:6]}")
    group = f"group-{uuid.uuid4().hex[:8]}"
    overrides = {
        "kafka.bootstrap_servers": kafka_bootstrap,
        "kafka.topic": spans_topic,
        "kafka.group_id": group,
        "kafka.commit_interval_s": 0.2,
        "results.bootstrap_servers": faulty_broker.bootstrap,
        "results.topic": results_topic,
        "sampling.metrics": ["faithfulness"],
        "assembly.quiet_period_s": 0.1,
        "evaluation.flush_timeout_s": 1.0,
    }
    partition = TopicPartition(spans_topic, 0)
    with RunningCollector(evaluate=True, **overrides) as collector:
        metrics = collector.service.status.port
        before = scrape(metrics).value("ragpulse_evaluations_total", metric="faithfulness")
        faulty_broker.freeze()
        try:
            producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
            for i in range(5):
                producer.send(spans_topic, _trace(100 + i))
            producer.flush()
            producer.close()
            wait_for(
                lambda: (
                    scrape(metrics).value("ragpulse_evaluations_total", metric="faithfulness") - before == 5
                ),
                60,
                "the five traces evaluated while the results broker is frozen",
            )
            time.sleep(3)  # many flush and commit rounds
            assert committed_offsets(kafka_bootstrap, group, [partition])[partition] in (None, 0)
        finally:
            faulty_broker.resume()
        wait_for(
            lambda: committed_offsets(kafka_bootstrap, group, [partition])[partition] == 5,
            90,
            "the offsets after the results",
        )
        documents = [json.loads(r.value) for r in _read_all(faulty_broker, results_topic, 5)]
    assert len(documents) == 5
