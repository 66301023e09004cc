"""A failing LLM judge delays scores, never loses them: refused connections, 500s, 429s, hangs,
truncated JSON and verdict lists of the wrong length leave records held and retried with backoff;
once the judge answers, every trace is scored in both exporters and nothing was committed unscored
or given up."""

from __future__ import annotations

import json
import time
from collections import Counter

from testkit.collector_runner import wait_for
from testkit.kafka_read import read_topic
from testkit.openai_server import ScriptedOpenAIServer
from testkit.otlp_sink import OtlpSink
from testkit.process import free_port
from testkit.reliability import Stack, counter, status
from testkit.scrape import scrape
from tests.reliability.conftest import Report

REFUSED_S = 10
PHASES, PHASE_S = ("500", "429", "hang"), 10


def test_judge_outages_and_bad_replies_delay_scores_without_losing_any(
    kafka_bootstrap: str, sink: OtlpSink, report: Report
) -> None:
    port = free_port()  # nothing listens there yet: connections are refused
    judge_env = {
        "RAGPULSE_JUDGE__BASE_URL": f"http://127.0.0.1:{port}/v1",
        "RAGPULSE_JUDGE__MODEL": "scripted-judge",
        "RAGPULSE_JUDGE__TIMEOUT_S": "2",
        "RAGPULSE_JUDGE__MAX_RETRIES": "0",
        "RAGPULSE_EVALUATION__JUDGE_RETRY_BACKOFF_S": "1",
        "OPENAI_API_KEY": "test-key-not-secret",
    }
    stack = Stack(kafka_bootstrap, sink, metrics=("faithfulness",), extra_env=judge_env)
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
            # Answered, but unusable: truncated JSON, and verdict lists one short of the items asked about.
            judge.fail_next(*["malformed"] * 5, *["short"] * 5)
            healthy_at = time.monotonic()
            stack.produce(20)
            ledger = stack.wait_until_scored(240)
            recovered_s = time.monotonic() - healthy_at
            wait_for(lambda: status(replica, "/readyz") == 200, 90, "ready again without any new traffic")
            documents = [json.loads(r.value) for r in read_topic(stack.bootstrap, stack.results_topic)]
            given_up = counter(replica, "ragpulse_dropped_total", reason="judge_unavailable")
            calls = scrape(replica.metrics_port).by_label("ragpulse_judge_requests_total", "outcome")
    finally:
        stack.close()
    outcomes = Counter(d["outcome"] for d in documents)
    report.figure(
        f"{ledger.line()}; outcomes {dict(outcomes)}; judge calls by outcome {calls}; offsets committed "
        f"while refused: {committed_while_refused}; all scored {recovered_s:.0f}s after the judge recovered"
    )
    assert ledger.lost == 0, ledger.line()
    assert committed_while_refused == 0
    assert 503 in readiness
    assert given_up == 0
    assert outcomes["error"] <= 10, outcomes  # only unusable answers may score `error`, never an outage
