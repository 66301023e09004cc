"""The judge budget holds under a burst: admission reserves each evaluation's expected spend.

Spend is known only once an evaluation is over, and a burst of traces is decided before the first one
is. Admission therefore reserves what each evaluation is expected to cost
(collector/sampling/budget.py). Here: a real collector against the scripted judge over real HTTP, whose
spend (priced by `judge.prices_per_million`) must stay within `usd_per_day`; and the Sampler's real
Decisions, reservation by reservation, on a fake clock.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from collector.judging.config import JudgeConfig
from collector.metrics import SAMPLING_DECISIONS
from collector.pipeline.queue import EvaluationQueue, Job, NoHold
from collector.records import RagRecord, RetrievedNode
from collector.sampling.budget import BudgetConfig
from collector.sampling.sampler import Decision, Sampler, SamplingConfig, SamplingOutcome
from testkit.collector_runner import RunningCollector, wait_for
from testkit.openai_server import ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.scrape import scrape

MODEL = "budget-judge"
# One faithfulness evaluation of the default RagCase costs ~$0.000151 at gpt-4o-mini's prices (895 tokens,
# 2 requests): this budget is worth three of them, a tenth of what two bursts of ten would spend.
USD_PER_DAY = 0.0005
ONE_EVALUATION_USD = 0.000151


def _burst(first: int, count: int) -> bytes:
    """`count` distinct traces in one OTLP request: they close together, decided before any is judged."""
    spans = []
    for i in range(first, first + count):
        case = RagCase()
        spans += make_spans("openinference", replace(case, query=f"{case.query} (burst {i})"))
    return encode(spans)


def _figures(port: int, before: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)) -> tuple[float, ...]:
    """(judge spend, sampled, over budget, faithfulness evaluations) since `before`."""
    metrics = scrape(port)
    now = (
        metrics.value("ragpulse_judge_cost_usd_total", model=MODEL),
        metrics.value("ragpulse_sampling_decisions_total", decision="sampled"),
        metrics.value("ragpulse_sampling_decisions_total", decision="over_budget"),
        metrics.value("ragpulse_evaluations_total", metric="faithfulness"),
    )
    return tuple(a - b for a, b in zip(now, before, strict=True))


def test_bursts_of_traces_spend_no_more_than_the_usd_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two bursts of ten: the first is decided before any spend is known (before reservations all ten
    were admitted, 2.6 times the budget spent), the second after the first's spend taught the estimate."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    settings = {
        "judge.model": MODEL,
        "judge.prices_per_million": {MODEL: (0.15, 0.60)},
        "judge.max_retries": 0,
        "sampling.metrics": ["faithfulness"],
        "sampling.budget.usd_per_day": USD_PER_DAY,
    }
    with (
        ScriptedOpenAIServer() as server,
        RunningCollector(evaluate=True, **{"judge.base_url": server.base_url, **settings}) as collector,
    ):
        port, otlp = collector.service.status.port, collector.service.receiver.port  # type: ignore[attr-defined]
        before = _figures(port)
        for burst in (1, 2):
            assert post_traces(otlp, _burst(10 * burst, 10))[0] == 200

            def decided(bursts: int = burst) -> bool:
                _, sampled, over, scored = _figures(port, before)
                return sampled + over == 10 * bursts and scored == sampled

            wait_for(decided, 60, f"burst {burst} decided and its admitted traces scored")
        spent, sampled, over, _ = _figures(port, before)
    print(
        f"\nbudget ${USD_PER_DAY}: 20 traces, {sampled:g} admitted, {over:g} over_budget, spent ${spent:.6f}"
    )
    assert spent <= USD_PER_DAY
    assert 1 <= sampled <= USD_PER_DAY // ONE_EVALUATION_USD
    assert over == 20 - sampled  # every trace left out is counted with the existing reason


JUDGE = JudgeConfig(base_url="http://judge.invalid/v1", model="gpt-4o-mini")  # never called: priced only


def _record(i: int, passage_chars: int = 1000) -> RagRecord:
    node = RetrievedNode(
        "d1", ("Paris is the capital and largest city of France. " * 50)[:passage_chars], 0.8
    )
    return RagRecord(
        f"{i + 1:032x}", f"{i + 1:016x}", "What is the capital of France?", "Paris.", nodes=(node,)
    )


def _sampler(budget: BudgetConfig, judge: JudgeConfig | None = JUDGE) -> Sampler:
    return Sampler(
        SamplingConfig(metrics=["faithfulness"], budget=budget), clock=lambda: 1_800_000_000.0, judge=judge
    )


def _expected(record: RagRecord) -> Decision:
    """What a sampler with room to spare reserves for `record`: one evaluation's estimate."""
    return _sampler(BudgetConfig(usd_per_day=1e6, tokens_per_day=10**12)).decide(record)


def test_a_burst_is_admitted_only_as_far_as_its_reservations_fit() -> None:
    one = _expected(_record(0))
    assert one.sampled and one.reserved_usd > 0 and one.reserved_tokens > 0
    sampler = _sampler(BudgetConfig(usd_per_day=1.6 * one.reserved_usd))
    over_before = SAMPLING_DECISIONS.labels("over_budget")._value.get()
    burst = [sampler.decide(_record(i)) for i in range(10)]  # nothing settled yet: each reservation counts
    assert [d.decision for d in burst] == [SamplingOutcome.SAMPLED] + [SamplingOutcome.OVER_BUDGET] * 9
    assert SAMPLING_DECISIONS.labels("over_budget")._value.get() - over_before == 9
    assert sampler.budget_remaining_ratio() == pytest.approx(1 - 1 / 1.6)
    # The judge reports half the estimate: the figure replaces the reservation and calibrates the estimate.
    sampler.record_spend(int(one.reserved_tokens / 2), one.reserved_usd / 2, reserved=burst[0])
    assert burst[0].reserved_usd == 0.0
    assert sampler.budget_remaining_ratio() == pytest.approx(1 - 0.5 / 1.6)
    second = [sampler.decide(_record(i)) for i in range(10, 20)]
    assert [d.sampled for d in second].count(True) == 2  # 0.5 spent + 2 x 0.5 reserved <= 1.6 < 2.0
    assert second[0].reserved_usd == pytest.approx(one.reserved_usd / 2)


def test_the_estimate_scales_with_the_text_the_judge_reads() -> None:
    small, large = _expected(_record(0, 200)), _expected(_record(0, 2400))
    assert large.reserved_usd > 3 * small.reserved_usd


def test_a_token_budget_reserves_tokens() -> None:
    one = _expected(_record(0))
    sampler = _sampler(BudgetConfig(tokens_per_hour=int(2.5 * one.reserved_tokens)))
    burst = [sampler.decide(_record(i)) for i in range(10)]
    assert [d.sampled for d in burst].count(True) == 2


def test_a_reservation_goes_back_when_the_job_ends_without_spending() -> None:
    one = _expected(_record(0))
    sampler = _sampler(BudgetConfig(usd_per_day=1.5 * one.reserved_usd))
    held = sampler.decide(_record(0))
    assert sampler.decide(_record(1)).decision is SamplingOutcome.OVER_BUDGET
    sampler.record_spend(0, 0.0, reserved=held)  # the judge failed: the record waits for a retry, still held
    assert sampler.decide(_record(2)).decision is SamplingOutcome.OVER_BUDGET
    held.release()  # the job is over (a duplicate, given up on): nothing spent, the reservation goes back
    held.release()  # idempotent
    assert sampler.budget_remaining_ratio() == 1.0
    assert sampler.decide(_record(3)).sampled


def test_a_shed_job_gives_its_reservation_back() -> None:
    one = _expected(_record(0))
    sampler = _sampler(BudgetConfig(usd_per_day=1.5 * one.reserved_usd))
    decision = sampler.decide(_record(0))
    EvaluationQueue(max_sheddable=0, retry_for_s=0.0, retry_backoff_s=1.0).put(
        Job(_record(0), decision, NoHold())
    )
    assert decision.reserved_usd == 0.0 and sampler.budget_remaining_ratio() == 1.0


def test_a_throttled_record_reserves_nothing() -> None:
    one = _expected(_record(0))
    config = SamplingConfig(
        metrics=["faithfulness"],
        max_evaluations_per_minute=1,
        budget=BudgetConfig(usd_per_day=10 * one.reserved_usd),
    )
    sampler = Sampler(config, clock=lambda: 1_800_000_000.0, judge=JUDGE)
    assert sampler.decide(_record(0)).sampled
    assert sampler.decide(_record(1)).decision is SamplingOutcome.THROTTLED
    assert sampler.budget_remaining_ratio() == pytest.approx(0.9)


def test_the_offline_judge_reserves_nothing() -> None:
    sampler = _sampler(BudgetConfig(usd_per_day=1e-9), judge=None)
    decisions = [sampler.decide(_record(i)) for i in range(10)]
    assert all(d.sampled and d.reserved_usd == 0.0 for d in decisions)
