"""The Kafka receiver: a kafka-python consumer in a consumer group, committing at-least-once.

Offsets are committed by the consumer thread only (kafka-python consumers are not thread-safe),
the last one included, and only as far as `OffsetTracker` says every earlier record is done:
`stop()` ends polling at once, the thread goes on committing while the pipeline drains, and
`shutdown()` asks it for the final commit and the close. When too many records are in flight
the consumer pauses its partitions instead of buffering without bound.

It reads two topics, as the OTel Collector's kafkaexporter writes them: spans (`otlp_spans`) and
log records (`otlp_logs`, which carry GenAI message content linked to their span). A trace is
assembled by one replica only if its spans and its log records reach the same replica, so both
topics must have the same partition count and both be keyed by trace id (the kafkaexporter's
`partition_traces_by_id` and `partition_logs_by_trace_id`): the group's range assignment
(kafka-python's default strategy) then gives a replica the same partition numbers of both topics.
A missing logs topic is normal (an app that sends spans only): it is read once it exists.

One record can never stop the consumer: a record that cannot be decoded, or whose handling raises
anything unexpected, is dead-lettered with its reason, its offset released, and reading goes on.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from typing import Any

from kafka import KafkaConsumer
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.structs import OffsetAndMetadata, TopicPartition
from pydantic import BaseModel, ConfigDict, Field, model_validator

from collector.logs import RateLimitedLog
from collector.metrics import CONSUMER_COMMITTED_LAG, CONSUMER_LAG
from collector.pipeline.offsets import OffsetTracker, RecordAck
from collector.receivers.decode import DecodeError, Encoding, Signal
from collector.receivers.otlp import count, dead_letter_source, decode_batch
from collector.stages import DeadLetter, DeadLetterSink, Deliver, Received, internal_error_detail

logger = logging.getLogger(__name__)


class KafkaConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    bootstrap_servers: str | None = Field(None, description="host:port[,host:port]; unset = no Kafka.")
    topic: str = "otlp_spans"
    logs_topic: str | None = Field(
        "otlp_logs",
        description="Log records (the kafkaexporter's default logs topic); null = spans only. Same "
        "partition count as `topic` and keyed by trace id, so a trace's spans and logs meet.",
    )
    group_id: str = "ragpulse"
    encoding: Encoding = Encoding.AUTO
    dead_letter_topic: str | None = Field(None, description="Default: '<topic>.dlq'.")
    max_record_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    max_in_flight_records: int = Field(10_000, ge=1, description="Pause fetching beyond this many.")
    commit_interval_s: float = Field(1.0, gt=0)
    auto_offset_reset: str = "earliest"
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Passed to kafka-python untouched: security_protocol, sasl_*, ssl_*, client_id, ...",
    )

    @property
    def dlq_topic(self) -> str:
        return self.dead_letter_topic or f"{self.topic}.dlq"

    @property
    def topics(self) -> list[str]:
        return [self.topic, self.logs_topic] if self.logs_topic else [self.topic]

    @property
    def topics_pattern(self) -> str:
        """The topics as an exact-match pattern. Subscribing by pattern never creates a topic (a
        subscription by name does, on brokers that allow it, with the broker's default partition
        count: a logs topic made that way would break the co-partitioning), and a topic created
        later is picked up at the next metadata refresh."""
        return "^(?:" + "|".join(re.escape(topic) for topic in self.topics) + ")$"

    @model_validator(mode="after")
    def _distinct_topics(self) -> KafkaConfig:
        if self.logs_topic == self.topic:
            raise ValueError("logs_topic must differ from topic")
        return self


_UNREACHABLE_AFTER_S = 5.0  # a blip (a coordinator move) does not flip readiness
# A commit waits for the group coordinator; without a bound it waits for as long as the broker is down,
# and the consumer thread checks nothing meanwhile. Bounded, it fails and is retried with the next one.
_COMMIT_TIMEOUT_MS = 5_000


class KafkaReceiver:
    name = "kafka"

    def __init__(self, config: KafkaConfig, dead_letters: DeadLetterSink) -> None:
        self.config = config
        self.tracker = OffsetTracker()
        self._dead_letters = dead_letters
        self._stop = threading.Event()  # no more polling
        self._close = threading.Event()  # final commit, then close (on the consumer thread)
        self._thread: threading.Thread | None = None
        self._consumer: KafkaConsumer | None = None
        self._assigned = False
        self._assignment: set[TopicPartition] = set()
        # Per partition, the offset the group has committed (or the first one read since assignment):
        # the committed lag is measured from it. Written on the consumer thread and kafka-python's I/O
        # thread (an async commit's callback); a dict item assignment is atomic.
        self._committed: dict[TopicPartition, int] = {}
        self._unreachable_since: float | None = None  # set on the consumer thread
        self._committing_since: float | None = None  # while a blocking commit waits for the broker
        self._error_log = RateLimitedLog(interval_s=10.0)
        self._rejected_log = RateLimitedLog(interval_s=60.0)

    def exhausted(self, consumer: KafkaConsumer) -> bool:
        """A consumer-group receiver never runs out; a bounded replay does (called on its thread)."""
        return False

    def assignment(self) -> set[TopicPartition]:
        return self._assignment

    @property
    def alive(self) -> bool:
        """False once the consumer thread died (nothing would be read or committed again): /healthz
        fails and the orchestrator restarts the process, instead of a silent stall."""
        return self._thread is None or self._thread.is_alive() or self._close.is_set()

    @property
    def ready(self) -> bool:
        """In the group and able to reach its broker: /readyz says so while the broker is down."""
        now = time.monotonic()
        waiting = [since for since in (self._unreachable_since, self._committing_since) if since is not None]
        unreachable = any(now - since >= _UNREACHABLE_AFTER_S for since in waiting)
        return self._consumer is not None and self._assigned and not self._stop.is_set() and not unreachable

    def start(self, deliver: Deliver) -> None:
        self._consumer = self._connect()
        self._thread = threading.Thread(target=self._run, args=(deliver,), name="kafka-receiver", daemon=True)
        self._thread.start()

    def _connect(self) -> KafkaConsumer:
        """A consumer in the group, subscribed to the topics (a replay overrides this)."""
        options = {"auto_offset_reset": self.config.auto_offset_reset, **self.config.options}
        consumer = KafkaConsumer(
            bootstrap_servers=self.config.bootstrap_servers,
            group_id=self.config.group_id,
            enable_auto_commit=False,
            **options,
        )
        consumer.subscribe(pattern=self.config.topics_pattern, listener=_Rebalance(self))
        return consumer

    def _on_assigned(self, partitions: set[TopicPartition]) -> None:
        self._assigned, self._assignment = True, set(partitions)

    def _run(self, deliver: Deliver) -> None:
        consumer = self._consumer
        assert consumer is not None
        last_commit = time.monotonic()
        while not self._stop.is_set() and not self.exhausted(consumer):
            self._flow_control(consumer)
            try:
                batches = consumer.poll(timeout_ms=200, max_records=500)
            except Exception:
                logger.exception("Kafka poll failed; retrying")
                time.sleep(1)
                continue
            for partition, records in batches.items():
                for record in records:
                    self._handle(partition, record, deliver)
            self._check_reachable(consumer)
            if time.monotonic() - last_commit >= self.config.commit_interval_s:
                self.commit()
                self._report_lag(consumer)
                last_commit = time.monotonic()
        # Stopped: no more polling, but records in flight are still being finished by the pipeline.
        while not self._close.wait(self.config.commit_interval_s):
            self.commit()
        self.commit()
        consumer.close(autocommit=False)

    def _check_reachable(self, consumer: KafkaConsumer) -> None:
        """Whether the group coordinator is connected. kafka-python offers no public check, so this
        reads its coordinator (a private attribute, guarded): a broker outage makes the coordinator
        unknown within a heartbeat, and it is found again as soon as the broker answers."""
        coordinator = getattr(consumer, "_coordinator", None)
        if consumer.config.get("group_id") is None:  # a replay has no group, hence no coordinator
            return
        try:
            reachable = coordinator is None or not coordinator.coordinator_unknown()
        except Exception:
            reachable = True  # an internal we cannot read says nothing about the broker
        if reachable:
            self._unreachable_since = None
        elif self._unreachable_since is None:
            self._unreachable_since = time.monotonic()
            logger.warning("Kafka broker unreachable (no group coordinator); /readyz fails until it is back")

    def _handle(self, partition: TopicPartition, record: Any, deliver: Deliver) -> None:
        ack = self.tracker.track(partition, record.offset)  # one hold, handed to the pipeline with the spans
        self._committed.setdefault(partition, record.offset)
        signal = Signal.LOGS if partition.topic == self.config.logs_topic else Signal.TRACES
        try:
            batch = decode_batch(
                signal, record.value or b"", self.config.encoding, self.config.max_record_bytes
            )
            if batch.rejected:  # no client to tell, as OTLP's partial success does: say it in the log
                message = batch.rejection_message(signal)
                self._rejected_log.log(
                    logger, ValueError(message), "%s@%d: %s", partition, record.offset, message
                )
            count(batch, "kafka")
            if batch.spans or batch.logs:
                deliver(Received(spans=batch.spans, ack=ack, source="kafka", logs=batch.logs))
            else:
                ack.release()
        except DecodeError as exc:
            self._dead_letter(signal, exc.reason, exc.detail, record, ack)
        except Exception as exc:  # a bug must cost one record, never the consumer thread
            detail = internal_error_detail(exc)
            self._error_log.log(logger, exc, "record %s@%d failed (%s)", partition, record.offset, detail)
            self._dead_letter(signal, "internal_error", detail, record, ack)

    def _dead_letter(self, signal: Signal, reason: str, detail: str, record: Any, ack: RecordAck) -> None:
        """Set the record aside; its offset is released once the dead-letter topic has it. If it
        cannot be written the hold stays: the offset is not committed and the record is read again
        after a restart."""
        source = dead_letter_source("kafka", signal)
        letter = DeadLetter(reason, detail, record.value or b"", record.key, source)
        try:
            self._dead_letters.write(letter, on_written=ack.release)
        except Exception as exc:
            self._error_log.log(logger, exc, "dead letter of offset %d failed (%s)", record.offset, exc)

    def _flow_control(self, consumer: KafkaConsumer) -> None:
        in_flight = self.tracker.in_flight()
        paused = consumer.paused()
        if in_flight >= self.config.max_in_flight_records and not paused:
            consumer.pause(*consumer.assignment())
        elif paused and in_flight < self.config.max_in_flight_records // 2:
            consumer.resume(*paused)

    def commit(self, blocking: bool = True) -> None:
        """Commit what is done. A failed commit gives its offsets back to the tracker, so the next
        one retries them. `blocking=False` from the rebalance listener, which runs on kafka-python's
        IO thread, where a blocking commit fails ("Cannot block on net.run() from the IO thread")."""
        offsets = self.tracker.take_committable()
        if not offsets or self._consumer is None:
            return
        request = {tp: OffsetAndMetadata(off, "", -1) for tp, off in offsets.items()}
        if not blocking:
            self._consumer.commit_async(request, callback=self._committed_async)
            return
        self._committing_since = time.monotonic()
        try:
            self._consumer.commit(request, timeout_ms=_COMMIT_TIMEOUT_MS)
        except Exception as exc:  # the broker or the coordinator is unavailable, a rebalance...
            self.tracker.restore(offsets)
            logger.warning("offset commit failed (%s); it is retried with the next one", exc)
        else:
            self._committed.update(offsets)
        finally:
            self._committing_since = None

    def _committed_async(self, offsets: dict[TopicPartition, OffsetAndMetadata], response: Any) -> None:
        if isinstance(response, Exception):
            self.tracker.restore({tp: meta.offset for tp, meta in offsets.items()})
            logger.warning("offset commit failed (%s); it is retried with the next one", response)
        else:
            self._committed.update({tp: meta.offset for tp, meta in offsets.items()})

    def _report_lag(self, consumer: KafkaConsumer) -> None:
        """Two lags per partition: from the position (what was read) and from the committed offset
        (what is done). Only the second grows when commits wait on an exporter or a dead letter."""
        for partition in consumer.assignment():
            end = consumer.highwater(partition)
            if end is not None:
                position = consumer.position(partition)
                labels = (partition.topic, str(partition.partition))
                CONSUMER_LAG.labels(*labels).set(max(0, end - position))
                CONSUMER_COMMITTED_LAG.labels(*labels).set(
                    max(0, end - self._committed.get(partition, position))
                )

    def stop(self) -> None:
        """Stop polling, at once; records already delivered are still acknowledged and committed."""
        self._stop.set()

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """The consumer thread commits what is done and closes the consumer; wait up to `timeout_s`."""
        self._stop.set()
        self._close.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                logger.warning("the Kafka consumer did not close within %.0fs", timeout_s)
        self._consumer = None


class _Rebalance(ConsumerRebalanceListener):
    def __init__(self, receiver: KafkaReceiver) -> None:
        self.receiver = receiver

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.receiver.commit(blocking=False)  # what is done, before the partitions' next owner reads
        self.receiver.tracker.forget(revoked)
        self.receiver._on_assigned(self.receiver.assignment() - set(revoked))
        for partition in revoked:
            self.receiver._committed.pop(partition, None)
            for gauge in (CONSUMER_LAG, CONSUMER_COMMITTED_LAG):
                with contextlib.suppress(KeyError):
                    gauge.remove(partition.topic, str(partition.partition))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.receiver._on_assigned(set(assigned))
        logger.info("assigned partitions: %s", sorted(p.partition for p in assigned))
