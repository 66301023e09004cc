"""Does a stalled broker stall evaluation? Kafka ingest with dead letters and a results topic.

    python -m benchmarks.stalled_broker [--good 300] [--bad 20]

A real broker (scripts/kafka.sh) holds `--good` RAG traces and `--bad` traces that cannot be
extracted (a `rag.query` without its `rag.response`: dead letters). `ragpulse run` consumes them
all; then, before the traces close, the broker is frozen with SIGSTOP (a broker that accepts
connections and answers nothing: the worst case for a client). The run measures how long the
good traces take to be evaluated (scores visible on /metrics) with the broker frozen, against a
run where it stays up. Then the broker resumes (SIGCONT) and every dead letter must reach the
dead-letter topic: nothing lost.

To measure another version of the sidecar, run from its checkout with this one on the path: the
subprocess imports `collector` from its working directory, e.g.
`cd /tmp/old && PYTHONPATH=/path/to/ragpulse python -m benchmarks.stalled_broker`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

from ragpulse_sdk import attributes
from testkit.kafka_broker import FaultyBroker
from testkit.kafka_read import read_topic
from testkit.process import RagpulseProcess
from testkit.rag_traces import Collect, RagCase, encode, make_spans, provider
from testkit.scrape import scrape

QUIET_PERIOD_S = 3.0  # long enough to freeze the broker after consumption, before any trace closes


def bad_trace(i: int) -> bytes:
    """A trace stating a RAG interaction with ragpulse's own attributes, but no response."""
    collect = Collect()
    tracer = provider(collect).get_tracer("app")
    with tracer.start_as_current_span("rag") as span:
        span.set_attribute(attributes.QUERY, f"a question without its answer ({i})")
    return encode(collect.spans)


def good_trace(i: int) -> bytes:
    case = RagCase()
    case.query = f"{case.query} (request {i})"
    case.response = f"{case.response} This answers request {i}."
    return encode(make_spans("ragpulse", case))


def produce(bootstrap: str, topic: str, good: int, bad: int) -> int:
    """Half the good traces, the bad ones, the other half; returns the number of spans written."""
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    bodies = [
        *(good_trace(i) for i in range(good // 2)),
        *(bad_trace(i) for i in range(bad)),
        *(good_trace(i) for i in range(good // 2, good)),
    ]
    spans = 0
    for i, body in enumerate(bodies):
        producer.send(topic, body, key=f"trace-{i}".encode())
        data = TracesData.FromString(body)
        spans += sum(len(scope.spans) for rs in data.resource_spans for scope in rs.scope_spans)
    producer.flush()
    producer.close()
    return spans


def run(broker: FaultyBroker, good: int, bad: int, freeze: bool) -> None:
    bootstrap = broker.bootstrap
    topic = f"bench_spans_{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(t, 1, 1) for t in (topic, f"{topic}.dlq", f"{topic}_results")])
    admin.close()
    spans = produce(bootstrap, topic, good, bad)
    env = {
        "RAGPULSE_RESULTS__BOOTSTRAP_SERVERS": bootstrap,
        "RAGPULSE_RESULTS__TOPIC": f"{topic}_results",
        "RAGPULSE_EVALUATION__QUEUE_SIZE": str(good * 2),
    }
    args = [
        "--kafka-bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--quiet-period",
        str(QUIET_PERIOD_S),
        "--quiet",
    ]
    with RagpulseProcess(*args, env=env) as ragpulse:
        while scrape(ragpulse.metrics_port).value("ragpulse_spans_received_total") < spans:
            time.sleep(0.02)
        consumed = time.monotonic()
        if freeze:
            broker.freeze()
        try:
            evaluated = 0.0
            while evaluated < good and time.monotonic() - consumed < 120:
                evaluated = scrape(ragpulse.metrics_port).value(
                    "ragpulse_evaluations_total", metric="faithfulness"
                )
                time.sleep(0.05)
            elapsed = time.monotonic() - consumed
        finally:
            if freeze:
                broker.resume()
        deadline = time.monotonic() + 60
        while len(read_topic(bootstrap, f"{topic}.dlq")) < bad and time.monotonic() < deadline:
            time.sleep(1)
        letters = len(read_topic(bootstrap, f"{topic}.dlq"))
    state = "frozen (SIGSTOP)" if freeze else "up"
    scoring = elapsed - QUIET_PERIOD_S
    print(
        f"  broker {state:<16}: {evaluated:.0f}/{good} traces evaluated {elapsed:5.1f} s after consumption "
        f"({QUIET_PERIOD_S:.0f} s of it the quiet period; "
        f"{evaluated / max(scoring, 1e-3):6.1f} records/s after it); "
        f"dead letters on the topic afterwards: {letters}/{bad}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--good", type=int, default=300)
    parser.add_argument("--bad", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragpulse-bench-kafka-") as state:
        broker = FaultyBroker(Path(state))
        try:
            print(f"{args.good} good traces and {args.bad} dead letters on a real broker; offline judge")
            run(broker, args.good, args.bad, freeze=False)
            run(broker, args.good, args.bad, freeze=True)
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
