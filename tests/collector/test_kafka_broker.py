"""Smoke test of the real-broker fixtures: records go in and come out through kafka-python."""

from __future__ import annotations

import time
import uuid

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.fixtures.kafka import TopicFactory

POLL_DEADLINE_S = 30.0


def _produce(bootstrap: str, records: list[tuple[str, int, bytes]]) -> None:
    """Send (topic, partition, value) records and wait until the broker acknowledged each one."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="ragpulse-smoke-producer")
    try:
        futures = [producer.send(name, value=value, partition=p) for name, p, value in records]
        producer.flush()
        for future in futures:
            future.get(timeout=10)
    finally:
        producer.close()


def _consume_all(consumer: KafkaConsumer, expected: int) -> list[tuple[int, bytes]]:
    """Poll until `expected` records arrived (or the deadline passed); returns (partition, value)."""
    received: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + POLL_DEADLINE_S
    while len(received) < expected and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            received.extend((record.partition, record.value) for record in batch)
    return received


def test_produce_then_consume_on_a_fresh_topic(kafka_bootstrap: str, topic: str) -> None:
    values = [f"span-{i}".encode() for i in range(5)]
    _produce(kafka_bootstrap, [(topic, 0, value) for value in values])

    consumer = KafkaConsumer(
        bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        received = _consume_all(consumer, expected=len(values))
    finally:
        consumer.close()

    assert [value for _, value in received] == values


def test_consumer_group_reads_and_commits_both_partitions(
    kafka_bootstrap: str, kafka_topic: TopicFactory
) -> None:
    topic = kafka_topic(partitions=2)
    records = [(topic, i % 2, f"record-{i}".encode()) for i in range(6)]
    _produce(kafka_bootstrap, records)

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=kafka_bootstrap,
        group_id=f"ragpulse-smoke-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    try:
        received = _consume_all(consumer, expected=len(records))
        consumer.commit()
        partitions = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        assert consumer.assignment() == set(partitions)
        assert [consumer.committed(tp) for tp in partitions] == [3, 3]
    finally:
        consumer.close()

    assert sorted(received) == sorted((p, value) for _, p, value in records)
