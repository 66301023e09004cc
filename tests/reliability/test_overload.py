"""Ten times more traffic than the judge can score: the sidecar sheds what does not fit its bounded
queue and counts it, scores the rest, keeps memory flat and keeps answering exporters; every trace
sent is either scored or counted as shed, none vanishes."""

from __future__ import annotations

import json
import time

from testkit.collector_runner import wait_for
from testkit.openai_server import ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.otlp_sink import OtlpSink
from testkit.process import RagpulseProcess, tree_memory_mib
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.reliability import EVALUATION_SPAN_PREFIX, Stack, counter
from tests.reliability.conftest import Report

JUDGE_LATENCY_S, WORKERS = 0.2, 2  # two judge calls per record: about 5 records a second
SENT_PER_S, SECONDS = 100, 10


def test_ten_times_the_judges_capacity_is_scored_or_counted_as_shed(sink: OtlpSink, report: Report) -> None:
    with ScriptedOpenAIServer(latency_s=JUDGE_LATENCY_S) as judge:
        env = {
            "RAGPULSE_JUDGE__BASE_URL": judge.base_url,
            "RAGPULSE_JUDGE__MODEL": "scripted-judge",
            "OPENAI_API_KEY": "test-key-not-secret",
            "RAGPULSE_EVALUATION__WORKERS": str(WORKERS),
            "RAGPULSE_EVALUATION__QUEUE_SIZE": "50",
            "RAGPULSE_SAMPLING__METRICS": json.dumps(["faithfulness"]),
            "RAGPULSE_SAMPLING__REFERENCE_METRICS": "[]",
            "RAGPULSE_ASSEMBLY__QUIET_PERIOD_S": "0.5",
            "RAGPULSE_OTEL_EXPORT__ENDPOINT": sink.traces_url,
        }
        with RagpulseProcess(env=env) as sidecar:
            assert sidecar.process is not None
            memory = [tree_memory_mib(sidecar.process.pid)]
            statuses: list[int] = []
            started = time.monotonic()
            for second in range(SECONDS):
                for i in range(SENT_PER_S):  # distinct answers: the judge's cache cannot help
                    case = RagCase(response=f"The Eiffel Tower was completed in 1889 ({second}/{i}).")
                    statuses.append(
                        post_traces(sidecar.otlp_port, encode(make_spans("openinference", case)))[0]
                    )
                memory.append(tree_memory_mib(sidecar.process.pid))
                time.sleep(max(0.0, started + second + 1 - time.monotonic()))
            sent = len(statuses)

            def accounted() -> tuple[int, float]:
                scored = len(sink.trace_ids(EVALUATION_SPAN_PREFIX))
                return scored, counter(sidecar, "ragpulse_dropped_total", reason="overload")

            wait_for(lambda: sum(accounted()) >= sent, 120, "every trace scored or counted as shed")
            time.sleep(2)  # nothing more may arrive: the sum must stay exactly `sent`
            scored, shed = accounted()
    report.figure(
        f"{sent} traces in {SECONDS}s against ~{WORKERS / (2 * JUDGE_LATENCY_S):.0f}/s of judge capacity: "
        f"{scored} scored + {shed:.0f} shed and counted = {scored + shed:.0f}; HTTP {sorted(set(statuses))}; "
        f"PSS {memory[0]:.0f} -> {max(memory):.0f} MiB"
    )
    assert set(statuses) == {200}
    assert scored + shed == sent
    assert shed > 0 and scored > 0
    assert max(memory) < memory[0] + 100


def test_a_kafka_backlog_waits_instead_of_being_shed(
    kafka_bootstrap: str, sink: OtlpSink, report: Report
) -> None:
    """Kafka keeps what is not committed, so a flood of Kafka records is never shed: the consumer
    pauses at kafka.max_in_flight_records and the lag absorbs it; every trace is scored."""
    env = {"RAGPULSE_EVALUATION__QUEUE_SIZE": "5", "RAGPULSE_KAFKA__MAX_IN_FLIGHT_RECORDS": "200"}
    stack = Stack(kafka_bootstrap, sink, extra_env=env)
    try:
        stack.produce(1500)
        replica = stack.start_replica()
        assert replica.process is not None
        memory = [tree_memory_mib(replica.process.pid)]
        started = time.monotonic()
        while stack.ledger().lost and time.monotonic() - started < 240:
            memory.append(tree_memory_mib(replica.process.pid))
            time.sleep(2)
        ledger, took_s = stack.ledger(), time.monotonic() - started
        shed = counter(replica, "ragpulse_dropped_total", reason="overload")
    finally:
        stack.close()
    report.figure(
        f"a backlog of {ledger.produced} traces, queue_size 5, 200 records in flight: {ledger.line()}; "
        f"{shed:.0f} shed; scored in {took_s:.0f}s; PSS {memory[0]:.0f} -> {max(memory):.0f} MiB"
    )
    assert ledger.lost == 0 and shed == 0, ledger.line()
