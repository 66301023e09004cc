"""The evaluate processor: circuit breaker, cascade, de-duplication and label bounds."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace

import psutil
import pytest

from collector.exporters.prometheus import PrometheusExporter
from collector.judging.breaker import CircuitBreaker
from collector.judging.build import build_evaluator, build_llm_judge, build_offline_judge
from collector.judging.config import JudgeConfig, MetricsConfig
from collector.judging.evaluator import RecordEvaluator
from collector.judging.outbound import OutboundConfig
from collector.judging.scorers import JudgeOnLoop, OfflineJudgePool
from collector.labels import OTHER, LabelPolicy
from collector.metrics import CASCADE, EVALUATIONS, JUDGE_INPUT_REWRITES
from collector.records import RagRecord, RetrievedNode
from collector.sampling.dedup import RecentEvaluations
from collector.stages import Evaluation, Outcome
from evaluators import TestCase
from testkit.openai_server import ScriptedOpenAIServer

PASSAGE = "The Eiffel Tower was completed in March 1889 and is 330 metres tall."


def _record(i: int, response: str = "The Eiffel Tower was completed in 1889.") -> RagRecord:
    return RagRecord(
        trace_id=f"{i:032x}",
        anchor_span_id=f"{i:016x}",
        query=f"When was the Eiffel Tower completed? ({i})",
        response=response,
        nodes=(RetrievedNode("n0", PASSAGE, 0.9),),
    )


def _value(counter, *labels: str) -> float:
    return counter.labels(*labels)._value.get()


def _llm_evaluator(server: ScriptedOpenAIServer, breaker: CircuitBreaker, **judge: object) -> RecordEvaluator:
    """The LLM judge alone, behind `breaker`, as `build_evaluator` wires it."""
    config = JudgeConfig(base_url=server.base_url, timeout_s=2, **judge)  # type: ignore[arg-type]
    return RecordEvaluator(JudgeOnLoop(build_llm_judge(config, breaker)), breaker=breaker)


async def test_breaker_opens_on_a_failing_judge_and_skips_calling_it() -> None:
    """While open, nothing is scored and nothing is asked: the pipeline puts the record back (counted in
    `ragpulse_evaluations_deferred_total`, not as a drop) until `judge_retry_for_s` runs out."""
    with ScriptedOpenAIServer() as server:
        server.fail_next(*["500"] * 200)
        breaker = CircuitBreaker(failures=3, cooldown_s=60)
        evaluator = _llm_evaluator(server, breaker, max_retries=0)
        for i in range(3):  # three failed requests in a row open the circuit
            evaluations, _ = await evaluator.evaluate(_record(i), ["faithfulness"])
            assert [e.outcome for e in evaluations] == [Outcome.ERROR]  # an error result, not an exception
        assert breaker.is_open and not evaluator.ready
        requests_before = len(server.requests)
        evaluations, _ = await evaluator.evaluate(_record(2), ["faithfulness", "answer_relevancy"])
        assert evaluations == []
        assert len(server.requests) == requests_before  # the failing judge was not called
        given_up = evaluator.unavailable(["faithfulness", "answer_relevancy"], "judge unavailable for 10 min")
        assert [(e.metric, e.outcome, e.reason) for e in given_up] == [
            ("faithfulness", Outcome.ERROR, "judge unavailable for 10 min"),
            ("answer_relevancy", Outcome.ERROR, "judge unavailable for 10 min"),
        ]


def test_breaker_half_opens_after_cooldown() -> None:
    breaker = CircuitBreaker(failures=2, cooldown_s=10)
    breaker.record(False, 0.0)
    breaker.record(False, 1.0)
    assert not breaker.allow(5.0)
    assert breaker.allow(11.0)  # one probe goes through
    breaker.record(False, 11.5)  # and fails: open again at once
    assert not breaker.allow(12.0)
    breaker.record(True, 30.0)
    assert breaker.allow(30.0)


async def test_cascade_sends_only_doubtful_scores_to_the_llm_judge() -> None:
    offline = JudgeOnLoop(build_offline_judge())
    with ScriptedOpenAIServer() as server:
        llm = JudgeOnLoop(build_llm_judge(JudgeConfig(base_url=server.base_url, max_retries=0)))
        everything = RecordEvaluator(offline, escalate_to=llm, band=(0.0, 1.0))
        escalated_before = _value(CASCADE, "escalated")
        evaluations, _ = await everything.evaluate(_record(3), ["faithfulness", "answer_relevancy"])
        judges = {e.metric: e.judge for e in evaluations}
        assert judges == {"faithfulness": "openai", "answer_relevancy": "offline"}
        # What the offline judge said stays beside the LLM judge's outcome (the review queue compares them).
        offline_said = {e.metric: e.offline_outcome for e in evaluations}
        assert offline_said == {"faithfulness": Outcome.PASSED, "answer_relevancy": None}
        assert _value(CASCADE, "escalated") == escalated_before + 1
        assert server.chat_requests

        nothing = RecordEvaluator(offline, escalate_to=llm, band=(2.0, 3.0))
        requests_before, offline_only_before = len(server.requests), _value(CASCADE, "offline_only")
        evaluations, _ = await nothing.evaluate(_record(4), ["faithfulness"])
        assert [e.judge for e in evaluations] == ["offline"]
        assert len(server.requests) == requests_before
        assert _value(CASCADE, "offline_only") == offline_only_before + 1


async def test_cascade_sends_what_the_offline_judge_cannot_judge_straight_to_the_llm() -> None:
    """Conversations and criteria: the offline judge could only say `unmeasured`."""
    offline = JudgeOnLoop(build_offline_judge())
    turns = [{"role": "user", "content": "I'm Dana."}, {"role": "assistant", "content": "Hello, Dana."}]
    case = TestCase(turns=turns, input="q", actual_output=_record(6).response)
    with ScriptedOpenAIServer() as server:
        llm = JudgeOnLoop(build_llm_judge(JudgeConfig(base_url=server.base_url, max_retries=0)))
        cascade = RecordEvaluator(offline, escalate_to=llm, band=(2.0, 3.0))
        direct_before = _value(CASCADE, "llm_only")
        evaluations, _ = await cascade.evaluate(
            _record(6), ["knowledge_retention", "aspect_coherence", "answer_relevancy"], case
        )
        assert {e.metric: e.judge for e in evaluations} == {
            "knowledge_retention": "openai",
            "aspect_coherence": "openai",
            "answer_relevancy": "offline",
        }
        assert all(e.outcome is Outcome.PASSED for e in evaluations)
        assert _value(CASCADE, "llm_only") == direct_before + 2


async def test_cascade_keeps_offline_verdicts_while_the_llm_circuit_is_open() -> None:
    breaker = CircuitBreaker(failures=1, cooldown_s=60)
    breaker.record(False, time.monotonic())  # the LLM judge just failed
    with ScriptedOpenAIServer() as server:
        llm = JudgeOnLoop(build_llm_judge(JudgeConfig(base_url=server.base_url, max_retries=0), breaker))
        offline = JudgeOnLoop(build_offline_judge())
        evaluator = RecordEvaluator(offline, escalate_to=llm, band=(0.0, 1.0), breaker=breaker)
        skipped_before = _value(CASCADE, "escalation_skipped")
        evaluations, _ = await evaluator.evaluate(_record(5), ["faithfulness"])
        assert [(e.metric, e.judge) for e in evaluations] == [("faithfulness", "offline")]
        assert _value(CASCADE, "escalation_skipped") == skipped_before + 1
        assert not server.requests


def test_recent_evaluations_suppress_within_the_window_and_stay_bounded() -> None:
    recent = RecentEvaluations(ttl_s=60, max_answers=3)
    recent.add(("t1", "s1"), ["faithfulness"], now=0)
    assert recent.seen(("t1", "s1"), "faithfulness", now=59)
    assert not recent.seen(("t1", "s1"), "faithfulness", now=61)
    assert not recent.seen(("t1", "s1"), "answer_relevancy", now=1)
    assert not recent.seen(("t1", "s2"), "faithfulness", now=1)  # another generation of the trace
    recent.add(("t1", "s1"), ["answer_relevancy"], now=2)  # a metric retried later joins the answer's
    assert recent.seen(("t1", "s1"), "faithfulness", now=3)
    assert recent.seen(("t1", "s1"), "answer_relevancy", now=3)
    for i in range(10):
        recent.add((f"t{i}", "s"), ["m"], now=100)
    assert len(recent) == 3
    assert not recent.seen(("t1", "s1"), "faithfulness", now=100)  # out of the window, then evicted


def test_label_policy_bounds_cardinality() -> None:
    fixed = LabelPolicy(["/ask", "/chat"])
    assert [fixed.bound(v) for v in ("/ask", "/admin", "")] == ["/ask", OTHER, "unknown"]
    learned = LabelPolicy(max_values=2)
    assert [learned.bound(v) for v in ("a", "b", "c", "a")] == ["a", "b", OTHER, "a"]


def test_service_and_route_pairs_are_bounded_as_a_product() -> None:
    """50 services x 50 routes would be 2,500 label pairs (x ~25 histogram series x metrics); the pairs
    are capped, a new pair beyond the cap reporting route `other`."""
    exporter = PrometheusExporter(LabelPolicy(max_values=50), LabelPolicy(max_values=50), max_pairs=20)
    evaluation = Evaluation("pairs_test", Outcome.PASSED, 1.0, "", 0.5, False, "offline", "m")
    for service in range(50):
        for route in range(50):
            record = _record(service * 50 + route)
            exporter.export(replace(record, service=f"s{service}", route=f"/r{route}"), [evaluation])
    pairs = {
        (sample.labels["service"], sample.labels["route"])
        for metric in EVALUATIONS.collect()
        for sample in metric.samples
        if sample.labels.get("metric") == "pairs_test" and sample.name.endswith("_total")
    }
    assert len(pairs) <= 20 + 50  # the cap, plus each service's `other` route
    assert sum(count for count in _outcome_counts("pairs_test")) == 2500  # nothing dropped, only relabelled


def _outcome_counts(metric: str) -> list[float]:
    return [
        sample.value
        for family in EVALUATIONS.collect()
        for sample in family.samples
        if sample.labels.get("metric") == metric and sample.name.endswith("_total")
    ]


async def test_the_offline_pool_scores_like_the_judge_in_process() -> None:
    pool = OfflineJudgePool(2)
    try:
        on_loop = RecordEvaluator(JudgeOnLoop(build_offline_judge()))
        in_pool = RecordEvaluator(pool)
        for i, response in enumerate(
            ["The Eiffel Tower was completed in 1889.", "It was built in 1925 by Gaudi."]
        ):
            metrics = ["faithfulness", "answer_relevancy", "hallucination"]
            here, _ = await on_loop.evaluate(_record(20 + i, response), metrics)
            there, _ = await in_pool.evaluate(_record(20 + i, response), metrics)
            assert [(e.metric, e.outcome, e.score, e.judge_model) for e in there] == [
                (e.metric, e.outcome, e.score, e.judge_model) for e in here
            ]
    finally:
        pool.shutdown()


async def test_a_dead_offline_worker_scores_error_and_the_pool_recovers() -> None:
    pool = OfflineJudgePool(1)
    try:
        evaluator = RecordEvaluator(pool)
        broken = pool._executor
        (worker,) = broken._processes.values()  # the worker process the pool started
        os.kill(worker.pid, signal.SIGKILL)  # e.g. the OOM killer
        for _ in range(100):
            if broken._broken:
                break
            await asyncio.sleep(0.05)
        lost, _ = await evaluator.evaluate(_record(30), ["faithfulness", "hallucination"])
        assert [(e.metric, e.outcome, e.score) for e in lost] == [
            ("faithfulness", Outcome.ERROR, None),
            ("hallucination", Outcome.ERROR, None),
        ]
        evaluations, _ = await evaluator.evaluate(_record(31), ["faithfulness"])
        assert [e.outcome for e in evaluations] == [Outcome.PASSED]  # a new pool took over
    finally:
        pool.shutdown()


_HOLDS_A_POOL = """
import multiprocessing.forkserver, sys, time
from collector.judging.scorers import OfflineJudgePool
pool = OfflineJudgePool(2)
pids = [*pool._executor._processes, multiprocessing.forkserver._forkserver._forkserver_pid]
print(*pids, flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("reaped", [True, False], ids=["reaped", "zombie"])
def test_the_offline_workers_and_fork_server_exit_when_the_sidecar_is_killed_outright(reaped: bool) -> None:
    """SIGKILL (the OOM killer) gives the sidecar no shutdown: before, its workers waited for their
    next case for good, and kept the fork server up (seen as idle processes left by every CI run). A
    sidecar whose parent has not reaped it yet (a zombie) is gone too: it still answered signal 0."""
    sidecar = subprocess.Popen([sys.executable, "-c", _HOLDS_A_POOL], stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        assert sidecar.stdout is not None
        pids = [int(pid) for pid in sidecar.stdout.readline().split()]
        assert len(pids) == 3 and all(_alive(pid) for pid in pids)
        sidecar.kill()
        if reaped:
            sidecar.wait(10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.1)
        assert [pid for pid in pids if _alive(pid)] == []
    finally:
        sidecar.kill()
        sidecar.wait(10)
        for pid in (p for p in pids if _alive(p)):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_the_offline_pool_is_sized_by_the_container_cpu_limit(tmp_path, monkeypatch) -> None:
    from collector.judging import config

    limit = tmp_path / "cpu.max"
    monkeypatch.setattr(config, "_CGROUP_V2", limit)
    monkeypatch.setattr(config, "_CGROUP_V1", tmp_path / "absent")
    limit.write_text("150000 100000\n")  # a pod limited to 1.5 CPUs
    assert JudgeConfig().offline_process_count(workers=8) == min(2, config.available_cpus())
    limit.write_text("max 100000\n")  # no limit: the CPUs this process may run on
    assert JudgeConfig().offline_process_count(workers=1) == 1
    assert JudgeConfig(offline_processes=0).offline_process_count(workers=8) == 0


async def test_rate_limits_do_not_open_the_breaker() -> None:
    """A 429 is the provider pacing us: the judge waits its Retry-After, and the breaker stays closed."""
    with ScriptedOpenAIServer() as server:
        server.fail_next(*["429"] * 12)
        breaker = CircuitBreaker(failures=3, cooldown_s=60)
        evaluator = _llm_evaluator(server, breaker, max_retries=1)
        for i in range(4):
            await evaluator.evaluate(_record(40 + i), ["faithfulness"])
        assert not breaker.is_open and evaluator.ready


def test_readiness_returns_when_the_cooldown_is_over_without_waiting_for_a_record() -> None:
    breaker = CircuitBreaker(failures=1, cooldown_s=0.2)
    evaluator = RecordEvaluator(JudgeOnLoop(build_offline_judge()), breaker=breaker)
    breaker.record(False, time.monotonic())
    assert not evaluator.ready
    time.sleep(0.3)
    assert evaluator.ready  # half-open: the next record probes the judge


async def test_what_reaches_an_external_judge_is_masked_and_bounded() -> None:
    """The judge server records what it received: no e-mail address, phone or card number, at most
    `max_passages` passages of at most `max_passage_chars`; the offline judge is never involved."""
    email, phone, card = "jane.doe@example.com", "+1 415-555-0132", "4111 1111 1111 1111"
    record = RagRecord(
        trace_id="7" * 32,
        anchor_span_id="7" * 16,
        query=f"I am {email}; my card {card} was charged twice, call me at {phone}",
        response=f"We refunded the card ending 1111 and will call {phone}.",
        nodes=tuple(RetrievedNode(f"n{i}", f"Refunds take 5 days. Contact {email}. " * 20) for i in range(4)),
    )
    with ScriptedOpenAIServer() as server:
        config = JudgeConfig(
            base_url=server.base_url,
            max_retries=0,
            outbound=OutboundConfig(max_passages=2, max_passage_chars=200),
        )
        evaluator = build_evaluator(config, MetricsConfig(), workers=1)
        left_out = _value(JUDGE_INPUT_REWRITES, "passage_left_out")
        evaluations, _ = await evaluator.evaluate(record, ["faithfulness"])
        sent = json.dumps([r.body for r in server.chat_requests])
    assert [e.outcome for e in evaluations] != [Outcome.ERROR]
    assert server.chat_requests
    for secret in (email, phone, card, "415-555", "4111 1111"):
        assert secret not in sent, secret
    assert "[email-1]" in sent and "[phone-1]" in sent and "[card-1]" in sent
    assert "Refunds take 5 days." * 20 not in sent.replace(" Contact [email-1]. ", "")  # cut at 200 chars
    assert _value(JUDGE_INPUT_REWRITES, "passage_left_out") == left_out + 2
