"""Replay: re-read a time range of the spans topic, outside the consumer group.

It seeks every partition to the first offset at or after `start` and stops at the first offset at
or after `end`, so a replay never moves the production group's committed offsets and never
competes with it for partitions. Flow control (pausing when too many records are in flight) is the
Kafka receiver's, so a long replay does not overrun the evaluation queue.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kafka import KafkaConsumer
from kafka.structs import TopicPartition

from collector.pipeline.offsets import offsets_at
from collector.receivers.kafka import KafkaConfig, KafkaReceiver
from collector.stages import DeadLetterSink, Deliver

logger = logging.getLogger(__name__)


class KafkaReplayReceiver(KafkaReceiver):
    name = "kafka_replay"

    def __init__(self, config: KafkaConfig, dead_letters: DeadLetterSink, start_ms: int, end_ms: int) -> None:
        super().__init__(config, dead_letters)
        self.start_ms, self.end_ms = start_ms, end_ms
        self._stop_at: dict[TopicPartition, int] = {}
        self.records_read = 0
        self.finished = threading.Event()

    def _connect(self) -> KafkaConsumer:
        """A consumer outside the group, assigned every partition and sought to `start_ms`."""
        consumer = KafkaConsumer(
            bootstrap_servers=self.config.bootstrap_servers,
            group_id=None,
            enable_auto_commit=False,
            **self.config.options,
        )
        partitions = [TopicPartition(self.config.topic, p) for p in sorted(self._partitions(consumer))]
        consumer.assign(partitions)
        self._stop_at = offsets_at(consumer, partitions, self.end_ms)
        for tp, begin in offsets_at(consumer, partitions, self.start_ms).items():
            consumer.seek(tp, begin)
        logger.info("replaying %s: %d records", self.config.topic, self.backlog(consumer))
        self._on_assigned(set(partitions))
        return consumer

    def _partitions(self, consumer: KafkaConsumer) -> set[int]:
        partitions = consumer.partitions_for_topic(self.config.topic)
        if not partitions:
            raise ValueError(f"topic {self.config.topic!r} not found")
        return partitions

    def backlog(self, consumer: KafkaConsumer) -> int:
        return sum(max(0, stop - consumer.position(tp)) for tp, stop in self._stop_at.items())

    def _handle(self, partition: TopicPartition, record: Any, deliver: Deliver) -> None:
        if record.offset >= self._stop_at[partition]:
            return
        self.records_read += 1
        super()._handle(partition, record, deliver)

    def exhausted(self, consumer: KafkaConsumer) -> bool:
        """Called on the consumer thread; `finished` tells the other threads."""
        if all(consumer.position(tp) >= stop for tp, stop in self._stop_at.items()):
            self.finished.set()
        return self.finished.is_set()

    def commit(self, blocking: bool = True) -> None:
        """A replay reads outside the consumer group and commits nothing."""
