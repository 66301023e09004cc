"""Crashes and membership changes lose no evaluation: whatever dies (a replica, the broker) and
whoever joins or leaves the group, every trace produced ends with its scores in the results topic
and in the tracing backend; re-evaluations after a crash are bounded by the uncommitted window."""

from __future__ import annotations

import time

from testkit.collector_runner import wait_for
from testkit.kafka_broker import FaultyBroker
from testkit.otlp_sink import OtlpSink
from testkit.process import tree_memory_mib
from testkit.reliability import Stack, status
from tests.reliability.conftest import Report


def test_a_killed_replica_restarts_and_nothing_is_lost(
    kafka_bootstrap: str, sink: OtlpSink, report: Report
) -> None:
    """SIGKILL mid-backlog, then a restart: records whose scores were only partly exported (results
    written, evaluation spans still held) are evaluated again, not skipped by the duplicate filter."""
    stack = Stack(kafka_bootstrap, sink)
    try:
        stack.produce(600)
        replica = stack.start_replica()
        wait_for(lambda: sum(stack.results().values()) >= 200, 120, "some results before the kill")
        replica.kill()
        killed_at = time.monotonic()
        written, committed = sum(stack.results().values()), stack.committed()
        stack.start_replica()
        ledger = stack.wait_until_scored(180)
        recovered_s = time.monotonic() - killed_at
    finally:
        stack.close()
    report.figure(
        f"{ledger.line()}; at the kill {written} results written, {committed} traces committed; all scored "
        f"{recovered_s:.1f}s after the kill"
    )
    assert ledger.lost == 0, ledger.line()
    assert ledger.duplicated_results <= 600 * len(stack.metrics), ledger.line()


def test_a_broker_crash_during_a_backlog_loses_nothing(faulty_broker: FaultyBroker, report: Report) -> None:
    """The broker is SIGKILLed while a replica works through a backlog and restarted 15 s later on
    the same data: the replica rides it out (no restart), readiness says it cannot reach the broker
    meanwhile, and every trace is scored in both exporters afterwards."""
    with OtlpSink() as sink:
        stack = Stack(faulty_broker.bootstrap, sink)
        try:
            stack.produce(600)
            replica = stack.start_replica()
            wait_for(lambda: sum(stack.results().values()) >= 100, 120, "some results before the crash")
            pid = replica.process.pid if replica.process else 0
            faulty_broker.kill()
            crashed_at = time.monotonic()
            readiness, liveness = set(), set()
            while time.monotonic() - crashed_at < 15:
                readiness.add(status(replica, "/readyz"))
                liveness.add(status(replica, "/healthz"))
                time.sleep(0.5)
            faulty_broker.restart()
            ledger = stack.wait_until_scored(240)
            recovered_s = time.monotonic() - crashed_at
            memory = tree_memory_mib(pid)
            assert replica.process is not None and replica.process.poll() is None, replica.output()[-3000:]
        finally:
            stack.close()
    report.figure(f"{ledger.line()}; all scored {recovered_s:.1f}s after the crash; PSS {memory:.0f} MiB")
    assert ledger.lost == 0, ledger.line()
    assert liveness == {200}
    assert 503 in readiness, readiness


def test_replicas_joining_and_leaving_lose_nothing(
    kafka_bootstrap: str, sink: OtlpSink, report: Report
) -> None:
    """A second replica joins a group mid-backlog and the first leaves (SIGTERM drain) while traffic
    keeps arriving: the rebalances hand partitions over without loss, and the leaver exits promptly."""
    stack = Stack(kafka_bootstrap, sink)
    try:
        stack.produce(300)
        first = stack.start_replica()
        wait_for(lambda: sum(stack.results().values()) >= 100, 120, "the first replica scoring")
        stack.start_replica()
        stack.produce(300)
        started = time.monotonic()
        assert first.stop() == 0, first.output()[-3000:]
        left_s = time.monotonic() - started
        stack.produce(300)
        ledger = stack.wait_until_scored(180)
    finally:
        stack.close()
    report.figure(f"{ledger.line()}; the leaving replica drained and exited in {left_s:.1f}s")
    assert ledger.lost == 0, ledger.line()
    assert left_s < 60
