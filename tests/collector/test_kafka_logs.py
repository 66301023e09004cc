"""The Kafka receiver on the real broker: the logs topic joins its spans; one bad record costs one record."""

from __future__ import annotations

import http.client
import time
import uuid
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import TopicPartition
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter

from collector.http.status import StatusServer
from collector.pipeline.deadletter import (
    DETAIL_HEADER,
    REASON_HEADER,
    SOURCE_HEADER,
    TRUNCATED_HEADER,
    KafkaDeadLetters,
)
from collector.pipeline.offsets import OffsetTracker
from collector.receivers.kafka import KafkaConfig, KafkaReceiver
from collector.stages import Received
from testkit.collector_runner import wait_for
from testkit.genai_logs import QUESTION, assembled_spans, chat_with_message_logs, message_events
from testkit.kafka_read import committed_offsets
from testkit.rag_traces import Collect, encode, make_spans


def _config(bootstrap: str, topic: str, logs_topic: str | None = None, **more: Any) -> KafkaConfig:
    """A consumer config of its own group (quick commits unless the test says otherwise)."""
    settings: dict[str, Any] = {"commit_interval_s": 0.2, **more}
    group = f"group-{uuid.uuid4().hex[:8]}"
    return KafkaConfig(
        bootstrap_servers=bootstrap, topic=topic, logs_topic=logs_topic, group_id=group, **settings
    )


def _receiver(bootstrap: str, spans_topic: str, logs_topic: str) -> tuple[KafkaReceiver, KafkaConfig]:
    config = _config(bootstrap, spans_topic, logs_topic)
    return KafkaReceiver(config, KafkaDeadLetters(bootstrap, config.dlq_topic)), config


def test_log_record_on_logs_topic_joins_its_span(kafka_bootstrap: str, kafka_topic) -> None:
    """As the kafkaexporter writes them: spans and logs in two topics, same partitions, trace-id keys."""
    spans_topic, logs_topic = kafka_topic(partitions=2), kafka_topic(partitions=2)
    spans, records = Collect(), InMemoryLogRecordExporter()
    trace_id, span_id = chat_with_message_logs(spans, records)
    traced_records = [r for r in records.get_finished_logs() if r.log_record.trace_id]
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(logs_topic, key=trace_id.encode(), value=encode_logs(traced_records).SerializeToString())
    producer.send(spans_topic, key=trace_id.encode(), value=encode(spans.spans))
    producer.flush()
    receiver, config = _receiver(kafka_bootstrap, spans_topic, logs_topic)
    batches: list[Received] = []
    receiver.start(batches.append)
    try:
        wait_for(lambda: sum(len(b.spans) + len(b.logs) for b in batches) == 3, 60, "span and two logs")
        span = assembled_spans(batches)[span_id]
        assert message_events(span)[0] == ("gen_ai.user.message", {"content": QUESTION})
        assert [name for name, _ in message_events(span)] == ["gen_ai.user.message", "gen_ai.choice"]
        wait_for(lambda: receiver.tracker.in_flight() == 0, 30, "both records done")
    finally:
        receiver.shutdown()
    assert {b.source for b in batches} == {"kafka"}
    partitions = [TopicPartition(t, p) for t in (spans_topic, logs_topic) for p in (0, 1)]
    committed = {
        tp: offset
        for tp, offset in committed_offsets(kafka_bootstrap, config.group_id, partitions).items()
        if offset
    }
    assert sorted(committed.values()) == [1, 1]  # one record read and committed on each topic
    assert {tp.topic for tp in committed} == {spans_topic, logs_topic}
    assert len({tp.partition for tp in committed}) == 1  # same key, same partition count: same partition


def test_unexpected_error_and_bad_logs_record_are_dead_lettered(kafka_bootstrap: str, kafka_topic) -> None:
    spans_topic, logs_topic = kafka_topic(), kafka_topic()
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    good = encode(make_spans("ragpulse"))
    producer.send(spans_topic, good)  # its hand-over fails: dead-lettered as internal_error
    producer.send(spans_topic, good)
    producer.send(logs_topic, b"\x0a\xff\xff\xff\xff\x0f")
    producer.flush()
    receiver, config = _receiver(kafka_bootstrap, spans_topic, logs_topic)
    batches: list[Received] = []

    def deliver(received: Received) -> None:
        if not batches:
            batches.append(received)
            raise RuntimeError("x" * 400)
        batches.append(received)
        received.ack.release()

    receiver.start(deliver)
    try:
        wait_for(lambda: len(batches) == 2, 60, "the second record after the failing one")
        consumer = KafkaConsumer(
            config.dlq_topic,
            bootstrap_servers=kafka_bootstrap,
            auto_offset_reset="earliest",
            consumer_timeout_ms=15_000,
        )
        letters = []
        for message in consumer:
            letters.append({k: v.decode() for k, v in message.headers})
            if len(letters) == 2:
                break
        consumer.close()
        wait_for(lambda: receiver.tracker.in_flight() == 0, 30, "every record done")
    finally:
        receiver.shutdown()
    by_reason = {letter[REASON_HEADER]: letter for letter in letters}
    assert by_reason.keys() == {"internal_error", "malformed_protobuf"}
    assert by_reason["internal_error"][DETAIL_HEADER] == ("RuntimeError: " + "x" * 400)[:300]
    assert by_reason["internal_error"][SOURCE_HEADER] == "kafka"
    assert by_reason["malformed_protobuf"][SOURCE_HEADER] == "kafka/logs"
    committed = committed_offsets(
        kafka_bootstrap, config.group_id, [TopicPartition(spans_topic, 0), TopicPartition(logs_topic, 0)]
    )
    assert committed == {TopicPartition(spans_topic, 0): 2, TopicPartition(logs_topic, 0): 1}


def test_a_record_too_large_for_the_dead_letter_topic_is_cut_to_fit_and_its_offset_moves_on(
    kafka_bootstrap: str, kafka_admin
) -> None:
    """A dead letter over the producer's request limit could never be written; its record's hold would
    then block every later commit of the partition. It is cut to fit and says its original size."""
    topic = f"oversize-{uuid.uuid4().hex[:8]}"
    kafka_admin.create_topics(
        {topic: {"num_partitions": 1, "replication_factor": 1, "configs": {"max.message.bytes": "4194304"}}},
        wait_for_metadata=True,
    )
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, max_request_size=4 * 1024 * 1024)
    producer.send(topic, b"\x0a" + b"\xff" * 2_000_000)  # 2 MB: over the receiver's 1 MB record limit
    producer.send(topic, encode(make_spans("ragpulse")))
    producer.flush()
    config = _config(kafka_bootstrap, topic, max_record_bytes=1024 * 1024)
    receiver = KafkaReceiver(config, KafkaDeadLetters(kafka_bootstrap, config.dlq_topic))
    delivered: list[Received] = []

    def deliver(received: Received) -> None:
        delivered.append(received)
        received.ack.release()

    receiver.start(deliver)
    try:
        wait_for(lambda: len(delivered) == 1, 60, "the record after the oversize one")
        wait_for(lambda: receiver.tracker.in_flight() == 0, 30, "both records done")
        consumer = KafkaConsumer(
            config.dlq_topic,
            bootstrap_servers=kafka_bootstrap,
            auto_offset_reset="earliest",
            consumer_timeout_ms=15_000,
            max_partition_fetch_bytes=4 * 1024 * 1024,
        )
        letter = next(iter(consumer))
        consumer.close()
    finally:
        receiver.shutdown()
    headers = {k: v.decode() for k, v in letter.headers}
    assert headers[REASON_HEADER] == "too_large"
    assert headers[TRUNCATED_HEADER] == "2000001"
    assert 0 < len(letter.value) < 1024 * 1024
    assert committed_offsets(kafka_bootstrap, config.group_id, [TopicPartition(topic, 0)]) == {
        TopicPartition(topic, 0): 2
    }


def test_a_replica_joining_gets_the_offsets_the_other_finished_committed_at_the_revocation(
    kafka_bootstrap: str, kafka_topic
) -> None:
    """The rebalance listener runs on kafka-python's IO thread, where a blocking commit fails: what the
    first replica finished must still be committed when its partitions are revoked, or the joining
    replica scores it all again."""
    topic = kafka_topic(partitions=2)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for i in range(20):
        producer.send(topic, b"", partition=i % 2)  # empty records: done as soon as they are read
    producer.flush()
    config = _config(kafka_bootstrap, topic, commit_interval_s=600)  # only the revocation commits
    first = KafkaReceiver(config, KafkaDeadLetters(kafka_bootstrap, config.dlq_topic))
    first.start(lambda received: received.ack.release())
    second = KafkaReceiver(config, KafkaDeadLetters(kafka_bootstrap, config.dlq_topic))
    partitions = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    try:
        wait_for(
            lambda: len(first.assignment()) == 2 and first.tracker.in_flight() == 0, 60, "the first replica"
        )
        time.sleep(1)  # every record read and done
        second.start(lambda received: received.ack.release())
        wait_for(lambda: second.ready, 60, "the second replica's assignment")
        wait_for(
            lambda: (
                committed_offsets(kafka_bootstrap, config.group_id, partitions)
                == dict.fromkeys(partitions, 10)
            ),
            30,
            "the offsets committed when the first replica's partitions were revoked",
        )
    finally:
        second.shutdown()
        first.shutdown()


def test_offsets_whose_commit_failed_are_retried_not_forgotten() -> None:
    tracker = OffsetTracker()
    partition = TopicPartition("t", 0)
    for offset in range(3):
        tracker.track(partition, offset).release()
    taken = tracker.take_committable()
    assert taken == {partition: 3}
    tracker.restore(taken)  # the commit failed
    assert tracker.take_committable() == {partition: 3}
    tracker.track(partition, 3).release()
    tracker.restore({partition: 3})  # an older failed commit does not move a newer offset back
    assert tracker.take_committable() == {partition: 4}
    tracker.forget([partition])
    tracker.restore({partition: 4})  # revoked meanwhile: its new owner commits
    assert tracker.take_committable() == {}


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the point of the test
def test_a_dead_consumer_thread_fails_the_liveness_check(kafka_bootstrap: str, kafka_topic) -> None:
    """Nothing an input can raise escapes `_handle` (it is dead-lettered); should the thread die all the
    same, /healthz must say so, so the orchestrator restarts the process instead of a silent stall."""
    topic = kafka_topic()
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(topic, encode(make_spans("ragpulse")))
    producer.flush()
    config = _config(kafka_bootstrap, topic)
    receiver = KafkaReceiver(config, KafkaDeadLetters(kafka_bootstrap, config.dlq_topic))
    status = StatusServer("127.0.0.1", 0, ready=lambda: True, alive=lambda: receiver.alive)

    def deliver(received: Received) -> None:
        raise SystemExit("a BaseException no stage may catch")  # stands in for whatever kills a thread

    status.start()
    receiver.start(deliver)
    try:
        wait_for(lambda: not receiver.alive, 60, "the consumer thread to die")
        connection = http.client.HTTPConnection("127.0.0.1", status.port, timeout=10)
        connection.request("GET", "/healthz")
        assert connection.getresponse().status == 503
        connection.close()
    finally:
        receiver.shutdown(timeout_s=1)
        status.shutdown()
