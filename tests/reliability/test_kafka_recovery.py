"""Kafka writes come back after an outage longer than the producer's own deadline, and no letter can
hold the commits: the results exporter delivers every result once its broker returns (a producer that
stops answering is rebuilt), `/readyz` says when an exporter cannot deliver, a dead letter the topic
refuses as too large is cut to fit, and the committed-offset lag shows what the position lag hides."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from collector.exporters.kafka_writer import KafkaWriter
from collector.metrics import KAFKA_PRODUCER_REBUILDS
from collector.pipeline.deadletter import TRUNCATED_HEADER
from testkit.collector_runner import wait_for
from testkit.kafka_broker import FaultyBroker
from testkit.kafka_read import read_topic
from testkit.otlp_sink import OtlpSink
from testkit.reliability import Stack, counter, create_topics, status
from testkit.scrape import scrape
from tests.reliability.conftest import Report

# Short producer deadlines so an outage "longer than delivery_timeout_ms" takes seconds, not minutes.
SHORT_DEADLINES = {"delivery_timeout_ms": 15_000, "request_timeout_ms": 5_000}
OUTAGE_S = 75  # beyond the delivery timeout, and beyond the minute after which /readyz says so


def test_the_results_exporter_recovers_after_an_outage_longer_than_its_delivery_timeout(
    kafka_bootstrap: str, faulty_broker: FaultyBroker, sink: OtlpSink, report: Report
) -> None:
    """With results in flight the results broker dies for 75 s, five times the producer's delivery
    timeout (before: kafka-python's idempotent producer never answered again, nothing was written
    after the broker came back, /readyz said 200 and shutdown ended in a traceback)."""
    env = {"RAGPULSE_RESULTS__OPTIONS": json.dumps(SHORT_DEADLINES)}
    stack = Stack(kafka_bootstrap, sink, results_bootstrap=faulty_broker.bootstrap, extra_env=env)
    try:
        replica = stack.start_replica()
        stack.produce(50)
        wait_for(lambda: stack.ledger().lost == 0, 60, "the first traces scored")
        faulty_broker.kill()
        killed_at = time.monotonic()
        stack.produce(150)
        readiness = set()
        while time.monotonic() - killed_at < OUTAGE_S:
            readiness.add(status(replica, "/readyz"))
            time.sleep(1)
        committed_during = stack.committed()
        faulty_broker.restart()
        restarted_at = time.monotonic()
        ledger = stack.wait_until_scored(180)
        recovered_s = time.monotonic() - restarted_at
        wait_for(lambda: stack.committed() == 200, 60, "every offset committed")
        wait_for(lambda: status(replica, "/readyz") == 200, 60, "ready again")
        committed_lag = sum(
            scrape(replica.metrics_port)
            .by_label("ragpulse_kafka_consumer_committed_lag", "partition")
            .values()
        )
        rebuilds = counter(replica, "ragpulse_kafka_producer_rebuilds_total", writer="results")
        exit_code = replica.stop()
        output = replica.output()
    finally:
        stack.close()
    report.figure(
        f"{ledger.line()}; {OUTAGE_S}s results-broker outage: committed during it {committed_during}, "
        f"/readyz {sorted(readiness)}; all results written {recovered_s:.0f}s after the restart; producer "
        f"rebuilds {rebuilds:.0f}"
    )
    assert ledger.lost == 0, ledger.line()
    assert committed_during < 200
    assert 503 in readiness  # the exporter could not deliver, and said so
    assert committed_lag == 0
    assert exit_code == 0 and "Traceback" not in output, output[-3000:]


def test_a_producer_that_leaves_records_unanswered_is_rebuilt_and_they_are_resent(
    faulty_broker: FaultyBroker, report: Report
) -> None:
    """kafka-python promises an answer within `delivery_timeout_ms`; after a long outage its idempotent
    producer can break that promise for good (the issue's 150 s outage: no result written again). The
    writer's watchdog treats a record unanswered past its deadline as a stall: it counts it, builds a
    new producer (once the broker answers) and resends what was not confirmed. The deadline is cut to
    10 s here so that the outage, with records in flight, outlasts it."""
    topic = "stall-probe"
    create_topics(faulty_broker.bootstrap, (topic, 1))
    writer = KafkaWriter(faulty_broker.bootstrap, "results", stall_after_s=10.0, linger_ms=5)
    sent: list[int] = []
    failed: list[BaseException] = []
    rebuilds_before = KAFKA_PRODUCER_REBUILDS.labels("results")._value.get()
    sending = threading.Event()
    sending.set()

    def steady() -> None:  # 20 records a second, as evaluations arrive, across the kill
        i = 0
        while sending.is_set():
            writer.send(topic, f"r{i}".encode(), on_sent=lambda i=i: sent.append(i), on_failed=failed.append)
            i += 1
            time.sleep(0.05)

    producer = threading.Thread(target=steady, daemon=True)
    try:
        producer.start()
        time.sleep(3)
        faulty_broker.kill()
        time.sleep(25)
        delivering_during = writer.delivering
        faulty_broker.restart()
        restarted_at = time.monotonic()
        time.sleep(3)
        sending.clear()
        producer.join()
        total = writer.pending + len(sent) + len(failed)
        wait_for(lambda: len(sent) + len(failed) == total, 120, "every record answered after the restart")
        recovered_s = time.monotonic() - restarted_at
    finally:
        sending.clear()
        writer.close(5)
    rebuilds = KAFKA_PRODUCER_REBUILDS.labels("results")._value.get() - rebuilds_before
    on_topic = [int(r.value[1:]) for r in read_topic(faulty_broker.bootstrap, topic)]
    twice = len(on_topic) - len(set(on_topic))
    report.figure(
        f"{total} records sent across a 25s outage: {len(set(on_topic))} on the topic ({twice} twice), "
        f"all {recovered_s:.0f}s after the restart; producer rebuilds {rebuilds:.0f}; failed {len(failed)}"
    )
    assert not failed and sorted(sent) == list(range(total))
    assert set(on_topic) == set(range(total))
    assert rebuilds >= 1
    assert delivering_during  # 25 s is under the minute after which the writer says it cannot deliver


def _committed_lag(metrics_port: int) -> float:
    lags = scrape(metrics_port).by_label("ragpulse_kafka_consumer_committed_lag", "partition")
    return sum(lags.values())


def _dead_letter_topic_of_max_bytes(bootstrap: str, name: str, max_bytes: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="ragpulse-reliability")
    try:
        topic = NewTopic(name, 1, 1, topic_configs={"max.message.bytes": str(max_bytes)})
        admin.create_topics([topic])
    finally:
        admin.close()


def test_an_oversize_dead_letter_is_cut_to_fit_and_never_holds_the_commits(
    kafka_bootstrap: str, sink: OtlpSink, report: Report, tmp_path: Path
) -> None:
    """The dead-letter topic takes at most 4 KB; a 20 KB record that is not OTLP is dead-lettered
    (before: the producer refused every later letter, commits froze for good, the lag metric read 0)."""
    stack = Stack(kafka_bootstrap, sink, partitions=1)
    small_dlq = f"{stack.name}-small-dlq"
    _dead_letter_topic_of_max_bytes(kafka_bootstrap, small_dlq, 4096)
    try:
        replica = stack.start_replica(RAGPULSE_KAFKA__DEAD_LETTER_TOPIC=small_dlq)
        stack.produce(5)
        stack.produce_raw([b"not OTLP " * 2300])  # about 20 KB
        stack.produce(5)
        stack.produce_raw([b"not OTLP either"])  # a small letter after it
        stack.produce(5)
        ledger = stack.wait_until_scored(120)
        wait_for(lambda: stack.committed() == 17, 60, "every offset committed, past both letters")
        letters = read_topic(kafka_bootstrap, small_dlq)
        cut = counter(replica, "ragpulse_dead_letters_oversize_total", outcome="cut")
        committed_lag = sum(
            scrape(replica.metrics_port)
            .by_label("ragpulse_kafka_consumer_committed_lag", "partition")
            .values()
        )
        ready = status(replica, "/readyz")
    finally:
        stack.close()
    truncated = [dict(r.headers).get(TRUNCATED_HEADER) for r in letters]
    report.figure(
        f"{ledger.line()}; dead letters on a 4 KB topic: {[len(r.value) for r in letters]} bytes "
        f"original sizes {truncated}); cut {cut:.0f}; committed 17 of 17; committed lag {committed_lag:.0f}"
    )
    assert ledger.lost == 0, ledger.line()
    cut_letter, whole_letter = sorted(letters, key=lambda r: dict(r.headers).get(TRUNCATED_HEADER) is None)
    assert len(letters) == 2 and cut >= 1 and committed_lag == 0 and ready == 200
    assert dict(cut_letter.headers)[TRUNCATED_HEADER] == str(len(b"not OTLP " * 2300)).encode()
    assert 1024 <= len(cut_letter.value) <= 4096  # cut in half until it fit, not emptied
    assert whole_letter.value == b"not OTLP either"


def test_sasl_against_a_plaintext_listener_is_one_line_not_a_traceback(kafka_bootstrap: str) -> None:
    """A security mismatch at start (SASL credentials, a broker that speaks plaintext) exits with one
    line naming Kafka and what to check (before: a 40-line traceback from kafka-python's bootstrap)."""
    sasl = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "ragpulse",
        "sasl_plain_password": "not-the-password",
    }
    env = {
        **os.environ,
        "RAGPULSE_KAFKA__BOOTSTRAP_SERVERS": kafka_bootstrap,
        "RAGPULSE_KAFKA__OPTIONS": json.dumps(sasl),
        "RAGPULSE_METRICS_PORT": "0",
    }
    run = subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", "run"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    last = run.stderr.strip().splitlines()[-1]
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-3000:]
    assert last.startswith("ragpulse: Kafka: ") and "security_protocol" in last, last
    assert "not-the-password" not in run.stderr
