"""A failing LLM judge delays scores, never loses them: refused connections, 500s, 429s, hangs,
truncated JSON and verdict lists that match no item asked about leave records held and retried with
backoff; once the judge answers, every trace is scored in both exporters and nothing was committed
unscored or given up. A verdict list that matches some of the items is scored on those at once, the
rest unmeasured and counted (in detail: tests/reliability/test_judge_reply_mismatch.py)."""

from __future__ import annotations

import json
import time
from collections import Counter

from testkit.collector_runner import wait_for
from testkit.kafka_read import read_topic
from testkit.openai_server import ScriptedOpenAIServer
from testkit.otlp_sink import OtlpSink
from testkit.process import RagpulseProcess, free_port
from testkit.rag_traces import RagCase
from testkit.reliability import Stack, counter, status
from testkit.scrape import scrape
from tests.reliability.conftest import Report

REFUSED_S = 10
TWO_CLAIMS = "The Eiffel Tower was completed in 1889. It is 330 metres tall."
PHASES, PHASE_S = ("500", "429", "hang"), 10


def _judge_env(port: int, backoff_s: float) -> dict[str, str]:
    """The scripted judge on `port` (nothing listens there until a test starts it: refused)."""
    return {
        "RAGPULSE_JUDGE__BASE_URL": f"http://127.0.0.1:{port}/v1",
        "RAGPULSE_JUDGE__MODEL": "scripted-judge",
        "RAGPULSE_JUDGE__TIMEOUT_S": "2",
        "RAGPULSE_JUDGE__MAX_RETRIES": "0",
        "RAGPULSE_EVALUATION__JUDGE_RETRY_BACKOFF_S": str(backoff_s),
        "OPENAI_API_KEY": "test-key-not-secret",
    }


def test_judge_outages_and_bad_replies_delay_scores_without_losing_any(
    kafka_bootstrap: str, sink: OtlpSink, report: Report
) -> None:
    port = free_port()  # nothing listens there yet: connections are refused
    stack = Stack(kafka_bootstrap, sink, metrics=("faithfulness",), extra_env=_judge_env(port, backoff_s=1))
    try:
        replica = stack.start_replica()
        started = time.monotonic()
        stack.produce(40)
        readiness = set()
        while time.monotonic() - started < REFUSED_S:
            readiness.add(status(replica, "/readyz"))
            time.sleep(0.5)
        committed_while_refused = stack.committed()
        with ScriptedOpenAIServer(port=port) as judge:
            for mode in PHASES:  # each an outage of its own, while traffic goes on
                judge.failing = mode
                stack.produce(10)
                time.sleep(PHASE_S)
            judge.failing = None
            # Answered, but unusable: truncated JSON, and verdict lists one short of the one claim asked
            # about (mended by the repair turn, or nothing to score: error, retried).
            judge.fail_next(*["malformed"] * 5, *["short"] * 5)
            healthy_at = time.monotonic()
            stack.produce(20)
            ledger = stack.wait_until_scored(240)
            recovered_s = time.monotonic() - healthy_at
            wait_for(lambda: status(replica, "/readyz") == 200, 90, "ready again without any new traffic")
            # Every verdict list one short, the repair's too: a two-claim answer is scored at once on the
            # claim that matched (not retried), the other claim unmeasured, and the mismatch counted.
            judge.failing = "short"
            partial = set(stack.produce(5, RagCase(response=TWO_CLAIMS)))
            ledger = stack.wait_until_scored(120)
            judge.failing = None
            documents = [json.loads(r.value) for r in read_topic(stack.bootstrap, stack.results_topic)]
            given_up = sum(1 for d in documents if str(d["reason"]).startswith("judge unavailable"))
            calls = scrape(replica.metrics_port).by_label("ragpulse_judge_requests_total", "outcome")
            mismatches = _mismatches(replica)
    finally:
        stack.close()
    outcomes = Counter(d["outcome"] for d in documents)
    partly = [d for d in documents if d["trace_id"] in partial]
    unjudged = Counter([v["verdict"] for v in d["verdicts"]].count("unmeasured") for d in partly)
    report.figure(
        f"{ledger.line()}; outcomes {dict(outcomes)}; judge calls by outcome {calls}; scored on 1 of 2 "
        f"claims: {unjudged[1]} of {len(partial)} results, mismatches counted {mismatches:.0f}; offsets "
        f"committed while refused: {committed_while_refused}; all scored {recovered_s:.0f}s after the "
        "judge recovered"
    )
    assert ledger.lost == 0, ledger.line()
    assert committed_while_refused == 0
    assert 503 in readiness
    assert given_up == 0
    assert outcomes["error"] <= 10, outcomes  # only unusable answers may score `error`, never an outage
    assert all(d["outcome"] in ("passed", "failed") for d in partly) and unjudged == {1: len(partial)}
    assert mismatches >= len(partial)


def _mismatches(replica: RagpulseProcess) -> float:
    return counter(replica, "ragpulse_judge_reply_mismatches_total", metric="faithfulness")


def test_a_judge_outage_longer_than_the_retry_window_exports_an_error_for_every_record(
    kafka_bootstrap: str, sink: OtlpSink, report: Report
) -> None:
    """The judge never answers (connections refused) and `judge_retry_for_s` is 5 s: every sampled
    record still ends with a result in both exporters, outcome `error` and a reason that says why
    (before: no result record, no evaluation span, only a drop counter; `ragpulse_dropped_total
    {reason="circuit_open"}` climbed with every re-queue though nothing was dropped)."""
    judge_env = {**_judge_env(free_port(), backoff_s=0.5), "RAGPULSE_EVALUATION__JUDGE_RETRY_FOR_S": "5"}
    stack = Stack(kafka_bootstrap, sink, metrics=("faithfulness",), extra_env=judge_env)
    try:
        replica = stack.start_replica()
        stack.produce(20)
        ledger = stack.wait_until_scored(120)
        wait_for(lambda: stack.committed() == 20, 60, "every offset committed")
        documents = [json.loads(r.value) for r in read_topic(stack.bootstrap, stack.results_topic)]
        metrics = scrape(replica.metrics_port)
        dropped = metrics.by_label("ragpulse_dropped_total", "reason")
        deferred = metrics.by_label("ragpulse_evaluations_deferred_total", "reason")
        errors = metrics.value("ragpulse_evaluations_total", metric="faithfulness", outcome="error")
    finally:
        stack.close()
    reasons = Counter(str(d["reason"]).split(" (")[0][:40] for d in documents)
    outcomes = Counter(d["outcome"] for d in documents)
    report.figure(
        f"{ledger.line()}; outcomes {dict(outcomes)}; reasons {dict(reasons)}; "
        f"deferred {deferred}; dropped {dropped}"
    )
    assert ledger.lost == 0, ledger.line()
    assert {d["outcome"] for d in documents} == {"error"} and errors == 20
    assert all(d["reason"] for d in documents)
    assert not dropped.get("circuit_open") and not dropped.get("judge_unavailable"), dropped
    assert sum(deferred.values()) > 0
