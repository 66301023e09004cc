"""The whole stack as production runs it, for fault injection: RAG traces produced to a real Kafka
topic, `ragpulse run` replicas as subprocesses in one consumer group, the results topic and an OTLP
sink as the two exporters that leave the process, and a ledger that says, per trace id produced,
whether a score reached every exporter, and how many times.

Shared by `tests/reliability/` (one test per promise) and `benchmarks/soak.py` (hours of it).
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafka import KafkaAdminClient, KafkaProducer
from kafka.structs import TopicPartition

from testkit.kafka_read import committed_offsets, read_topic
from testkit.otlp_sink import OtlpSink
from testkit.process import RagpulseProcess, http_status
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.scrape import scrape

EVALUATION_SPAN_PREFIX = "evaluation "


@dataclass(frozen=True)
class Ledger:
    """Trace ids produced against trace ids with scores in each exporter."""

    produced: int
    lost_in_results: int
    lost_in_spans: int
    duplicated_results: int  # result records beyond one per (trace, metric)
    duplicated_spans: int

    @property
    def lost(self) -> int:
        return self.lost_in_results + self.lost_in_spans

    def line(self) -> str:
        return (
            f"produced {self.produced} traces; lost: results {self.lost_in_results}, "
            f"spans {self.lost_in_spans}; "
            f"duplicated: results {self.duplicated_results}, spans {self.duplicated_spans}"
        )


def create_topics(bootstrap: str, *specs: tuple[str, int]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="ragpulse-reliability")
    try:
        admin.create_topics(
            {name: {"num_partitions": partitions, "replication_factor": 1} for name, partitions in specs},
            wait_for_metadata=True,
        )
    finally:
        admin.close()


@dataclass
class Stack:
    """Topics of their own on `bootstrap` (a unique prefix per stack), the sink, and the replicas."""

    bootstrap: str
    sink: OtlpSink
    metrics: tuple[str, ...] = ("faithfulness", "answer_relevancy")
    partitions: int = 3
    results_bootstrap: str = ""  # another broker for the results topic (one that can be frozen)
    extra_env: dict[str, str] = field(default_factory=dict)
    name: str = field(default_factory=lambda: f"rel-{uuid.uuid4().hex[:8]}")
    produced: list[str] = field(default_factory=list)
    replicas: list[RagpulseProcess] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.results_bootstrap = self.results_bootstrap or self.bootstrap
        create_topics(self.bootstrap, (self.spans_topic, self.partitions), (self.dlq_topic, 1))
        create_topics(self.results_bootstrap, (self.results_topic, 3))
        self._producer = KafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=5, acks="all")

    @property
    def spans_topic(self) -> str:
        return f"{self.name}-spans"

    @property
    def results_topic(self) -> str:
        return f"{self.name}-results"

    @property
    def dlq_topic(self) -> str:
        return f"{self.name}-dlq"

    def env(self) -> dict[str, str]:
        return {
            "RAGPULSE_KAFKA__BOOTSTRAP_SERVERS": self.bootstrap,
            "RAGPULSE_KAFKA__TOPIC": self.spans_topic,
            "RAGPULSE_KAFKA__GROUP_ID": self.name,
            "RAGPULSE_KAFKA__DEAD_LETTER_TOPIC": self.dlq_topic,
            "RAGPULSE_RESULTS__BOOTSTRAP_SERVERS": self.results_bootstrap,
            "RAGPULSE_RESULTS__TOPIC": self.results_topic,
            "RAGPULSE_OTEL_EXPORT__ENDPOINT": self.sink.traces_url,
            "RAGPULSE_OTEL_EXPORT__TIMEOUT_S": "2",
            "RAGPULSE_SAMPLING__METRICS": json.dumps(list(self.metrics)),
            "RAGPULSE_SAMPLING__REFERENCE_METRICS": "[]",
            "RAGPULSE_ASSEMBLY__QUIET_PERIOD_S": "0.5",
            "RAGPULSE_EVALUATION__FLUSH_TIMEOUT_S": "3",
            **self.extra_env,
        }

    def start_replica(self, **env: str) -> RagpulseProcess:
        replica = RagpulseProcess(env={**self.env(), **env}).start()
        self.replicas.append(replica)
        return replica

    def produce(self, count: int, case: RagCase | None = None) -> list[str]:
        """`count` traces, one Kafka record each (a whole trace, keyed by its id, as the OTel
        Collector's kafka exporter does with partition_traces_by_id)."""
        ids = []
        for _ in range(count):
            spans = make_spans("openinference", case)
            trace_id = f"{spans[0].context.trace_id:032x}"
            self._producer.send(self.spans_topic, key=trace_id.encode(), value=encode(spans))
            ids.append(trace_id)
        self._producer.flush(60)
        self.produced.extend(ids)
        return ids

    def produce_raw(self, values: Iterable[bytes]) -> None:
        """Records that are not traces (hostile input): none is expected to be scored."""
        for value in values:
            self._producer.send(self.spans_topic, value=value)
        self._producer.flush(60)

    def results(self) -> Counter[str]:
        """Result records per trace id on the results topic, read from the start."""
        return Counter(
            str(json.loads(record.value)["trace_id"])
            for record in read_topic(self.results_bootstrap, self.results_topic)
        )

    def ledger(self) -> Ledger:
        produced = set(self.produced)
        results, spans = self.results(), self.sink.trace_ids(EVALUATION_SPAN_PREFIX)
        expected = len(self.metrics)
        return Ledger(
            produced=len(produced),
            lost_in_results=sum(1 for t in produced if results[t] < expected),
            lost_in_spans=sum(1 for t in produced if spans[t] < expected),
            duplicated_results=sum(max(results[t] - expected, 0) for t in produced),
            duplicated_spans=sum(max(spans[t] - expected, 0) for t in produced),
        )

    def wait_until_scored(self, timeout_s: float) -> Ledger:
        """Wait until every produced trace has its scores in both exporters (or time runs out)."""
        deadline = time.monotonic() + timeout_s
        while True:
            ledger = self.ledger()
            if ledger.lost == 0 or time.monotonic() > deadline:
                return ledger
            time.sleep(1.0)

    def committed(self) -> int:
        """The group's committed offsets on the spans topic, summed over partitions."""
        partitions = [TopicPartition(self.spans_topic, p) for p in range(self.partitions)]
        return sum(committed_offsets(self.bootstrap, self.name, partitions).values())

    def close(self) -> None:
        for replica in self.replicas:
            if replica.process is not None and replica.process.poll() is None:
                replica.stop()
        self._producer.close(5)


def status(replica: RagpulseProcess, path: str) -> int:
    return http_status(f"{replica.metrics_url}{path}")


def counter(replica: RagpulseProcess, name: str, **labels: str) -> float:
    try:
        return scrape(replica.metrics_port).value(name, **labels)
    except OSError:
        return 0.0
