"""At-least-once offset bookkeeping: commit an offset only when everything before it is done.

Every consumed record gets a `RecordAck`. Its first hold travels with the record's spans to the
pipeline, which releases it once they are buffered; each trace the record feeds holds it too.
When the last hold is released the record is done, and the partition's committable offset
advances over every contiguous done record.
Releases come from the pipeline thread, commits from the consumer thread: one lock guards both.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable

from kafka import KafkaConsumer
from kafka.structs import TopicPartition


class RecordAck:
    __slots__ = ("_holds", "_tracker", "offset", "partition")

    replayable = True  # the record stays in Kafka until its offset is committed

    def __init__(self, tracker: OffsetTracker, partition: TopicPartition, offset: int) -> None:
        self._tracker, self.partition, self.offset, self._holds = tracker, partition, offset, 1

    def hold(self) -> None:
        with self._tracker.lock:
            self._holds += 1

    def release(self) -> None:
        with self._tracker.lock:
            self._holds -= 1
            if self._holds == 0:
                self._tracker.mark_done(self.partition, self.offset)


class NoAck:
    """For sources without offsets (the OTLP/HTTP receiver answers once spans are buffered)."""

    replayable = False  # once answered, the request exists nowhere but here

    def hold(self) -> None:
        pass

    def release(self) -> None:
        pass


class OffsetTracker:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._pending: dict[TopicPartition, deque[int]] = {}
        self._done: dict[TopicPartition, set[int]] = {}
        self._committable: dict[TopicPartition, int] = {}

    def track(self, partition: TopicPartition, offset: int) -> RecordAck:
        """Register a consumed record; the caller owns the first hold and must release it."""
        with self.lock:
            self._pending.setdefault(partition, deque()).append(offset)
            self._done.setdefault(partition, set())
        return RecordAck(self, partition, offset)

    def mark_done(self, partition: TopicPartition, offset: int) -> None:
        """Called with the lock held."""
        pending = self._pending.get(partition)
        if not pending or offset < pending[0]:  # partition revoked meanwhile: its new owner re-reads it
            return
        done = self._done[partition]
        done.add(offset)
        while pending and pending[0] in done:
            head = pending.popleft()
            done.discard(head)
            self._committable[partition] = head + 1

    def take_committable(self) -> dict[TopicPartition, int]:
        """Offsets (next to read) that advanced since the last call."""
        with self.lock:
            ready, self._committable = self._committable, {}
        return ready

    def restore(self, offsets: dict[TopicPartition, int]) -> None:
        """Give back offsets whose commit failed, so the next commit retries them (unless the
        partition was revoked meanwhile, or a later offset is already waiting)."""
        with self.lock:
            for partition, offset in offsets.items():
                if partition in self._pending and offset > self._committable.get(partition, -1):
                    self._committable[partition] = offset

    def in_flight(self) -> int:
        with self.lock:
            return sum(len(p) for p in self._pending.values())

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        with self.lock:
            for partition in partitions:
                self._pending.pop(partition, None)
                self._done.pop(partition, None)
                self._committable.pop(partition, None)


def offsets_at(
    consumer: KafkaConsumer, partitions: list[TopicPartition], timestamp_ms: int
) -> dict[TopicPartition, int]:
    """Per partition, the first offset whose record is at or after `timestamp_ms` (else the end)."""
    found = consumer.offsets_for_times({tp: timestamp_ms for tp in partitions})
    ends = consumer.end_offsets(partitions)
    return {tp: found[tp].offset if found[tp] is not None else ends[tp] for tp in partitions}
