"""Sampling is pure logic: a fake clock, random trace ids, no I/O."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from collector.metrics import JUDGE_BUDGET_REMAINING, SAMPLING_DECISIONS
from collector.records import RagRecord, RetrievedNode
from collector.sampling.sampler import (
    BudgetConfig,
    Sampler,
    SamplingConfig,
    SamplingOutcome,
    SamplingRule,
)

PRODUCTION_METRICS = (
    "faithfulness",
    "answer_relevancy",
    "contextual_relevancy",
    "context_utilization",
    "hallucination",
)


class FakeClock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def random_trace_ids(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.getrandbits(128):032x}" for _ in range(count)]


def make_record(trace_id: str = "0af7651916cd43dd8448eb211c80319c", **changes: object) -> RagRecord:
    fields: dict[str, object] = {
        "trace_id": trace_id,
        "anchor_span_id": "b7ad6b7169203331",
        "query": "What is the capital of France?",
        "response": "Paris is the capital of France.",
        "nodes": (RetrievedNode("d1", "Paris is the capital and largest city of France.", 0.82),),
        "service": "rag-api",
        "route": "/api/ask",
        "model": "gpt-4o-mini",
        **changes,
    }
    return RagRecord(**fields)  # type: ignore[arg-type]


def sampled_share(sampler: Sampler, trace_ids: list[str]) -> float:
    return sum(sampler.decide(make_record(t)).sampled for t in trace_ids) / len(trace_ids)


def test_same_trace_gets_same_decision_on_every_replica() -> None:
    config = SamplingConfig(rate=0.3, metric_rates={"faithfulness": 0.5})
    replica_a, replica_b = Sampler(config, clock=FakeClock()), Sampler(config, clock=FakeClock())
    for trace_id in random_trace_ids(2_000):
        assert replica_a.decide(make_record(trace_id)) == replica_b.decide(make_record(trace_id))


def test_known_trace_id_decision_is_stable_across_releases() -> None:
    # Low 8 bytes 0x8448eb211c80319c / 2**64 = 0.517: in at rate 0.52, out at 0.51 (OTel's arithmetic).
    record = make_record("0af7651916cd43dd8448eb211c80319c")
    assert Sampler(SamplingConfig(rate=0.52)).decide(record).sampled
    assert not Sampler(SamplingConfig(rate=0.51)).decide(record).sampled


@pytest.mark.parametrize("rate", [0.01, 0.1, 0.5, 0.9])
def test_rate_is_accurate_on_random_trace_ids(rate: float) -> None:
    share = sampled_share(Sampler(SamplingConfig(rate=rate)), random_trace_ids(10_000))
    assert share == pytest.approx(rate, abs=0.015)


def test_rate_one_takes_everything_and_zero_nothing() -> None:
    ids = random_trace_ids(1_000)
    assert sampled_share(Sampler(SamplingConfig(rate=1.0)), ids) == 1.0
    assert sampled_share(Sampler(SamplingConfig(rate=0.0)), ids) == 0.0


def test_sampled_record_gets_the_metrics_its_inputs_allow() -> None:
    sampler = Sampler(SamplingConfig())
    assert sampler.decide(make_record()).metrics == PRODUCTION_METRICS
    with_reference = sampler.decide(make_record(expected_output="Paris."))
    assert with_reference.metrics == (
        *PRODUCTION_METRICS,
        "contextual_precision",
        "contextual_recall",
        "answer_correctness",
    )
    no_query = sampler.decide(make_record(query=" "))
    assert no_query.metrics == ("faithfulness", "hallucination")


def test_metrics_about_images_are_scored_only_where_a_passage_is_an_image() -> None:
    """On a text-only record the multi-modal metrics would repeat faithfulness and relevancy (and fire
    their own alerts for the same regression): they are left out there."""
    metrics = ("faithfulness", "multimodal_faithfulness", "multimodal_relevance")
    sampler = Sampler(SamplingConfig(metrics=metrics))
    assert sampler.decide(make_record()).metrics == ("faithfulness",)
    image = RetrievedNode(
        "d2", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk", 0.7
    )
    with_image = make_record(nodes=(*make_record().nodes, image))
    assert sampler.decide(with_image).metrics == metrics


def test_records_without_rag_data_are_counted_apart() -> None:
    sampler = Sampler(SamplingConfig())
    before = SAMPLING_DECISIONS.labels("no_rag_data")._value.get()
    assert sampler.decide(make_record(nodes=())).decision is SamplingOutcome.NO_RAG_DATA
    blank_nodes = (RetrievedNode("d1", "  "),)
    only_query = make_record(nodes=blank_nodes, response="")
    assert sampler.decide(only_query).decision is SamplingOutcome.NO_RAG_DATA
    no_runnable_metric = Sampler(SamplingConfig(metrics=["answer_correctness"], reference_metrics=[]))
    assert no_runnable_metric.decide(make_record()).decision is SamplingOutcome.NO_RAG_DATA
    assert SAMPLING_DECISIONS.labels("no_rag_data")._value.get() == before + 3


def test_first_matching_rule_sets_the_rate() -> None:
    config = SamplingConfig(
        rate=0.0,
        rules=[
            SamplingRule(top_score_below=0.5, rate=1.0),
            SamplingRule(route="/api/*", model="gpt-4*", rate=0.5),
            SamplingRule(service="rag-api", rate=1.0),
        ],
    )
    sampler = Sampler(config)
    ids = random_trace_ids(4_000)
    weak = (RetrievedNode("d1", "Lyon is in France.", 0.31),)
    assert all(sampler.decide(make_record(t, nodes=weak)).decision == "sampled" for t in ids[:200])
    share = sum(sampler.decide(make_record(t)).sampled for t in ids) / len(ids)
    assert share == pytest.approx(0.5, abs=0.03)  # second rule wins over the third
    other_route = make_record(route="/internal/ask")
    assert sampler.base_rate(other_route) == 1.0
    unscored = make_record(service="batch", nodes=(RetrievedNode("d1", "Paris."),), route="/x")
    assert sampler.base_rate(unscored) == 0.0  # no scores: top_score_below never matches


def test_rule_needs_a_condition() -> None:
    with pytest.raises(ValidationError, match="at least one"):
        SamplingRule(rate=1.0)


def test_metric_rates_apply_on_top_of_the_base_decision() -> None:
    config = SamplingConfig(rate=0.5, metric_rates={"faithfulness": 0.2, "hallucination": 0.0})
    sampler = Sampler(config)
    decisions = [sampler.decide(make_record(t)) for t in random_trace_ids(10_000)]
    sampled = [d for d in decisions if d.sampled]
    assert len(sampled) / len(decisions) == pytest.approx(0.5, abs=0.015)
    with_faithfulness = sum("faithfulness" in d.metrics for d in sampled) / len(sampled)
    assert with_faithfulness == pytest.approx(0.2, abs=0.02)
    assert not any("hallucination" in d.metrics for d in sampled)
    assert all("answer_relevancy" in d.metrics for d in sampled)


def test_trace_whose_every_metric_is_rated_out_is_not_sampled() -> None:
    config = SamplingConfig(metrics=["faithfulness"], metric_rates={"faithfulness": 0.0})
    assert Sampler(config).decide(make_record()).decision is SamplingOutcome.NOT_SAMPLED


def test_throttle_is_a_token_bucket_per_minute() -> None:
    clock = FakeClock()
    sampler = Sampler(SamplingConfig(max_evaluations_per_minute=60), clock=clock)
    ids = iter(random_trace_ids(200))
    outcomes = [sampler.decide(make_record(next(ids))).decision for _ in range(61)]
    assert outcomes.count(SamplingOutcome.SAMPLED) == 60
    assert outcomes[-1] is SamplingOutcome.THROTTLED
    clock.advance(1.0)  # one per second refills
    assert sampler.decide(make_record(next(ids))).sampled
    assert sampler.decide(make_record(next(ids))).decision is SamplingOutcome.THROTTLED
    clock.advance(3600)  # refills to capacity, not beyond
    sampled_after_idle = sum(sampler.decide(make_record(next(ids))).sampled for _ in range(100))
    assert sampled_after_idle == 60


def test_not_sampled_records_take_no_throttle_tokens() -> None:
    sampler = Sampler(SamplingConfig(rate=0.0, max_evaluations_per_minute=1), clock=FakeClock())
    for trace_id in random_trace_ids(50):
        assert sampler.decide(make_record(trace_id)).decision is SamplingOutcome.NOT_SAMPLED
    sampler.config = sampler.config.model_copy(update={"rate": 1.0})  # settings are immutable: a new one
    assert sampler.decide(make_record()).sampled


def test_token_budget_per_hour_rolls() -> None:
    clock = FakeClock(now=1_800_000_000.0 - 1_800_000_000.0 % 60)  # start of a minute
    sampler = Sampler(SamplingConfig(budget=BudgetConfig(tokens_per_hour=1_000)), clock=clock)
    assert sampler.budget_remaining_ratio() == 1.0
    sampler.record_spend(400, 0.0)
    assert sampler.budget_remaining_ratio() == pytest.approx(0.6)
    assert JUDGE_BUDGET_REMAINING._value.get() == pytest.approx(0.6)
    clock.advance(30 * 60)
    sampler.record_spend(600, 0.0)
    assert sampler.budget_remaining_ratio() == 0.0
    assert sampler.decide(make_record()).decision is SamplingOutcome.OVER_BUDGET
    clock.advance(30 * 60 + 1)  # the first spend left the hour
    assert sampler.budget_remaining_ratio() == pytest.approx(0.4)
    assert sampler.decide(make_record()).sampled


def test_usd_budget_per_day_and_min_over_limits() -> None:
    clock = FakeClock()
    budget = BudgetConfig(tokens_per_hour=10_000, usd_per_day=2.0)
    sampler = Sampler(SamplingConfig(budget=budget), clock=clock)
    sampler.record_spend(1_000, 1.5)
    assert sampler.budget_remaining_ratio() == pytest.approx(0.25)  # usd: 0.25 left < tokens: 0.9
    clock.advance(2 * 3600)
    sampler.record_spend(0, 0.5)
    assert sampler.decide(make_record()).decision is SamplingOutcome.OVER_BUDGET
    clock.advance(23 * 3600)
    assert sampler.budget_remaining_ratio() == pytest.approx(0.75)


def test_no_budget_means_free_offline_judging() -> None:
    sampler = Sampler(SamplingConfig(), clock=FakeClock())
    sampler.record_spend(0, 0.0)
    sampler.record_spend(10**9, 10**6)
    assert sampler.budget_remaining_ratio() == 1.0


def test_negative_spend_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        Sampler(SamplingConfig()).record_spend(-1, 0.0)


def test_every_decision_is_counted() -> None:
    sampler = Sampler(SamplingConfig(rate=0.5))
    ids = random_trace_ids(1_000)
    before = {d: SAMPLING_DECISIONS.labels(d)._value.get() for d in ("sampled", "not_sampled")}
    sampled = sum(sampler.decide(make_record(t)).sampled for t in ids)
    assert SAMPLING_DECISIONS.labels("sampled")._value.get() - before["sampled"] == sampled
    assert SAMPLING_DECISIONS.labels("not_sampled")._value.get() - before["not_sampled"] == len(ids) - sampled
