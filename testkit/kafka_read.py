"""What a Kafka topic and a consumer group hold now, read the way a test or benchmark needs it."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from kafka import KafkaConsumer
from kafka.structs import TopicPartition


def read_topic(bootstrap: str, topic: str, timeout_s: float = 120.0) -> list[Any]:
    """Every record (key, value, headers) on `topic` now, from the beginning of each partition to its
    end offset; raises rather than return part of it (a short read would count scored traces as lost).
    A topic that does not exist holds nothing."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_bytes=64 * 2**20
    )
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not partitions:
            return []
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        ends = consumer.end_offsets(partitions)
        records: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < ends[tp] for tp in partitions):
            if time.monotonic() > deadline:
                raise TimeoutError(f"read {len(records)} records of {topic} in {timeout_s}s, not all of them")
            for batch in consumer.poll(timeout_ms=200).values():
                records.extend(batch)
        return records
    finally:
        consumer.close()


def committed_offsets(
    bootstrap: str, group: str, partitions: Iterable[TopicPartition]
) -> dict[TopicPartition, int]:
    """The group's committed offset of each partition (0 where it committed nothing yet)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {tp: consumer.committed(tp) or 0 for tp in partitions}
    finally:
        consumer.close(autocommit=False)


def end_offsets(bootstrap: str, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """Each partition's end offset now (where its next record will be written)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        return consumer.end_offsets(list(partitions))
    finally:
        consumer.close()
