"""An exporter that fails or stalls delays scores, never loses them: offsets move only past what
every exporter confirmed, so while the tracing backend answers 503, hangs, or the results broker is
frozen, the committed offset stays put; once it recovers, every trace's scores arrive."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from testkit.collector_runner import wait_for
from testkit.kafka_broker import FaultyBroker
from testkit.otlp_sink import OtlpSink, SinkMode
from testkit.reliability import Ledger, Stack, counter, status
from tests.reliability.conftest import Report

OUTAGE_S = 20


@dataclass(frozen=True)
class Outage:
    ledger: Ledger
    committed_during: set[int]  # the group's committed offset, sampled every second of the outage
    caught_up_s: float  # from the recovery until every trace is scored and every offset committed

    def line(self, what: str) -> str:
        return (
            f"{self.ledger.line()}; offsets committed during the {OUTAGE_S}s {what}: "
            f"{sorted(self.committed_during)}; all scored and committed {self.caught_up_s:.1f}s after it"
        )


def _through_an_outage(stack: Stack, begin: Callable[[], None], end: Callable[[], None]) -> Outage:
    """50 traces scored and committed first; then 200 more sent during a 20 s outage of an exporter."""
    stack.produce(50)
    wait_for(lambda: stack.ledger().lost == 0, 60, "the first traces scored")
    wait_for(lambda: stack.committed() == 50, 30, "their offsets committed")
    begin()
    try:
        stack.produce(200)
        committed_during = set()
        started = time.monotonic()
        while time.monotonic() - started < OUTAGE_S:
            committed_during.add(stack.committed())
            time.sleep(1)
    finally:
        end()
    recovered_at = time.monotonic()
    ledger = stack.wait_until_scored(120)
    wait_for(lambda: stack.committed() == 250, 60, "every offset committed after the recovery")
    return Outage(ledger, committed_during, time.monotonic() - recovered_at)


@pytest.mark.parametrize("failure", [SinkMode.UNAVAILABLE, SinkMode.BLACKHOLE, SinkMode.SLOW])
def test_a_failing_tracing_backend_holds_offsets_until_it_recovers(
    kafka_bootstrap: str, failure: SinkMode, report: Report
) -> None:
    with OtlpSink(slow_s=1.5) as sink:  # slower than usual, within the 2 s export timeout
        stack = Stack(kafka_bootstrap, sink)
        try:
            replica = stack.start_replica()
            outage = _through_an_outage(
                stack, lambda: sink.set_mode(failure), lambda: sink.set_mode(SinkMode.OK)
            )
            alive = status(replica, "/healthz")
        finally:
            stack.close()
    report.figure(outage.line("outage"))
    assert outage.ledger.lost == 0, outage.ledger.line()
    if failure is not SinkMode.SLOW:  # a slow backend still confirms, later
        assert max(outage.committed_during) < 250, outage.committed_during
    assert alive == 200


def test_a_frozen_results_broker_holds_offsets_until_it_answers(
    kafka_bootstrap: str, faulty_broker: FaultyBroker, sink: OtlpSink, report: Report
) -> None:
    stack = Stack(kafka_bootstrap, sink, results_bootstrap=faulty_broker.bootstrap)
    try:
        stack.start_replica()
        outage = _through_an_outage(stack, faulty_broker.freeze, faulty_broker.resume)
    finally:
        stack.close()
    report.figure(outage.line("freeze"))
    assert outage.ledger.lost == 0, outage.ledger.line()
    assert outage.committed_during == {50}, outage.committed_during


def test_an_outage_longer_than_the_exporter_can_hold_pauses_evaluation(
    kafka_bootstrap: str, sink: OtlpSink, report: Report
) -> None:
    """The tracing backend is down for longer than the spans it would need to hold (200 here, 400
    owed): evaluation waits once the hold is nine tenths full, the Kafka records wait uncommitted,
    and nothing is dropped; after the recovery every trace is scored."""
    stack = Stack(kafka_bootstrap, sink, extra_env={"RAGPULSE_OTEL_EXPORT__MAX_QUEUE_SIZE": "200"})
    try:
        replica = stack.start_replica()
        outage = _through_an_outage(
            stack, lambda: sink.set_mode(SinkMode.UNAVAILABLE), lambda: sink.set_mode(SinkMode.OK)
        )
        dropped = counter(replica, "ragpulse_export_errors_total", exporter="otlp")
    finally:
        stack.close()
    report.figure(f"{outage.line('outage')}; spans dropped {dropped:.0f}")
    assert outage.ledger.lost == 0 and dropped == 0, outage.ledger.line()
    assert max(outage.committed_during) < 250
