"""An exporter that fails or stalls delays scores, never loses them: offsets move only past what
every exporter confirmed, so while the tracing backend answers 503, hangs, or the results broker is
frozen, the committed offset stays put; once it recovers, every trace's scores arrive."""

from __future__ import annotations

import time

import pytest

from testkit.collector_runner import wait_for
from testkit.kafka_broker import FaultyBroker
from testkit.otlp_sink import OtlpSink, SinkMode
from testkit.reliability import Stack, status
from tests.reliability.conftest import Report

OUTAGE_S = 20


@pytest.mark.parametrize("failure", [SinkMode.UNAVAILABLE, SinkMode.BLACKHOLE, SinkMode.SLOW])
def test_a_failing_tracing_backend_holds_offsets_until_it_recovers(
    kafka_bootstrap: str, failure: SinkMode, report: Report
) -> None:
    with OtlpSink(slow_s=1.5) as sink:  # slower than usual, within the 2 s export timeout
        stack = Stack(kafka_bootstrap, sink)
        try:
            replica = stack.start_replica()
            stack.produce(50)
            wait_for(lambda: stack.ledger().lost == 0, 60, "the first traces scored")
            wait_for(lambda: stack.committed() == 50, 30, "their offsets committed")
            sink.set_mode(failure)
            stack.produce(200)
            committed_during = set()
            started = time.monotonic()
            while time.monotonic() - started < OUTAGE_S:
                committed_during.add(stack.committed())
                time.sleep(1)
            sink.set_mode(SinkMode.OK)
            recovered_at = time.monotonic()
            ledger = stack.wait_until_scored(120)
            wait_for(lambda: stack.committed() == 250, 60, "every offset committed after the recovery")
            caught_up_s = time.monotonic() - recovered_at
            alive = status(replica, "/healthz")
        finally:
            stack.close()
    report.figure(
        f"{ledger.line()}; committed during the {OUTAGE_S}s outage: {sorted(committed_during)}; "
        f"all scored and committed {caught_up_s:.1f}s after the recovery"
    )
    assert ledger.lost == 0, ledger.line()
    if failure is not SinkMode.SLOW:  # a slow backend still confirms, later
        assert max(committed_during) < 250, committed_during
    assert alive == 200


def test_a_frozen_results_broker_holds_offsets_until_it_answers(
    kafka_bootstrap: str, faulty_broker: FaultyBroker, sink: OtlpSink, report: Report
) -> None:
    stack = Stack(kafka_bootstrap, sink, results_bootstrap=faulty_broker.bootstrap)
    try:
        stack.start_replica()
        stack.produce(50)
        wait_for(lambda: stack.ledger().lost == 0, 60, "the first traces scored")
        wait_for(lambda: stack.committed() == 50, 30, "their offsets committed")
        faulty_broker.freeze()
        try:
            stack.produce(200)
            committed_during = set()
            started = time.monotonic()
            while time.monotonic() - started < OUTAGE_S:
                committed_during.add(stack.committed())
                time.sleep(1)
        finally:
            faulty_broker.resume()
        recovered_at = time.monotonic()
        ledger = stack.wait_until_scored(120)
        wait_for(lambda: stack.committed() == 250, 60, "every offset committed after the recovery")
        caught_up_s = time.monotonic() - recovered_at
    finally:
        stack.close()
    report.figure(
        f"{ledger.line()}; committed during the {OUTAGE_S}s freeze: {sorted(committed_during)}; "
        f"all scored and committed {caught_up_s:.1f}s after it"
    )
    assert ledger.lost == 0, ledger.line()
    assert committed_during == {50}, committed_during
