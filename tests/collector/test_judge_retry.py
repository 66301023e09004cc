"""A record the judge could not score is not committed as an error: it is evaluated again, with
backoff, until the judge answers or `evaluation.judge_retry_for_s` runs out (then it is exported with
outcome `error`, like any result, never only counted as a drop)."""

from __future__ import annotations

import json
import time

from testkit.collector_runner import RunningCollector, wait_for
from testkit.openai_server import ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.scrape import scrape


def _trace(i: int) -> bytes:
    case = RagCase()
    case.query = f"{case.query} (retry {i})"
    return encode(make_spans("openinference", case))


def _settings(server: ScriptedOpenAIServer, **more: object) -> dict[str, object]:
    return {
        "judge.base_url": server.base_url,
        "judge.model": "scripted-judge",
        "judge.max_retries": 0,
        "judge.timeout_s": 2.0,
        "sampling.metrics": ["faithfulness"],
        "evaluation.judge_retry_backoff_s": 0.2,
        **more,
    }


def _counts(port: int) -> tuple[float, float, float]:
    """Passed, error, and evaluations put back for a later try (a re-queue is not a drop)."""
    metrics = scrape(port)
    return (
        metrics.value("ragpulse_evaluations_total", metric="faithfulness", outcome="passed"),
        metrics.value("ragpulse_evaluations_total", metric="faithfulness", outcome="error"),
        sum(metrics.by_label("ragpulse_evaluations_deferred_total", "reason").values()),
    )


def test_a_judge_outage_delays_the_score_instead_of_losing_it(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    with ScriptedOpenAIServer() as server:
        server.fail_next(*["500"] * 3)  # the first attempts fail; the judge then recovers
        with RunningCollector(evaluate=True, **_settings(server)) as collector:
            port = collector.service.status.port
            passed, errors, deferred = _counts(port)
            assert post_traces(collector.service.receiver.port, _trace(1))[0] == 200  # type: ignore[attr-defined]
            wait_for(lambda: _counts(port)[0] == passed + 1, 60, "the score after the judge recovered")
            assert _counts(port)[1] == errors  # no error exported
            assert _counts(port)[2] > deferred  # it was put back while the judge failed


def test_a_record_is_exported_as_an_error_after_judge_retry_for_s(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    with ScriptedOpenAIServer() as server:
        server.fail_next(*["500"] * 1000)
        settings = _settings(server, **{"evaluation.judge_retry_for_s": 1.0})
        with RunningCollector(evaluate=True, **settings) as collector:
            port = collector.service.status.port
            passed, errors, _ = _counts(port)
            assert post_traces(collector.service.receiver.port, _trace(2))[0] == 200  # type: ignore[attr-defined]
            wait_for(lambda: _counts(port)[1] == errors + 1, 60, "the record exported as an error")
            assert server.chat_requests and len(server.chat_requests) > 2  # it was retried meanwhile
            assert _counts(port)[0] == passed
            dropped = scrape(port).by_label("ragpulse_dropped_total", "reason")
            assert not dropped.get("judge_unavailable") and not dropped.get("circuit_open"), dropped


def test_a_retry_waits_for_a_queue_slot_instead_of_being_shed(monkeypatch) -> None:
    """New records may fill the bounded queue while a record waits for its retry; that record was
    accepted already, so it waits for a slot: every record the judge was asked about gets its score."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    with ScriptedOpenAIServer(latency_s=0.05) as server:
        server.fail_next(*["500"] * 4)
        settings = _settings(server, **{"evaluation.queue_size": 1, "evaluation.workers": 1})
        with RunningCollector(evaluate=True, **settings) as collector:
            port = collector.service.status.port
            passed, errors, _ = _counts(port)
            sent = range(100, 160)
            for i in sent:  # a steady stream: the one queue slot is taken most of the time
                assert post_traces(collector.service.receiver.port, _trace(i))[0] == 200  # type: ignore[attr-defined]
                time.sleep(0.03)

            def asked() -> set[int]:
                bodies = [json.dumps(r.body) for r in server.chat_requests]
                return {i for i in sent if any(f"(retry {i})" in body for body in bodies)}

            wait_for(
                lambda: _counts(port)[0] - passed >= len(asked()) > 0, 60, "a score for each record asked"
            )
            time.sleep(1)
            assert _counts(port)[0] - passed == len(asked())
            assert _counts(port)[1] == errors
