"""Reference document ids online: `record_rag(reference_context_ids=...)` -> span -> RagRecord ->
TestCase -> the ranking metrics, sampled like any other metric and scored with no judge call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from collector.conventions import ExtractionError, extract
from collector.judging.cases import filled_fields, to_test_case
from collector.judging.scorers import JudgeOnLoop
from collector.receivers.decode import decode
from collector.records import RagRecord, RetrievedNode
from collector.sampling.sampler import Sampler, SamplingConfig
from collector.spans import Span, flatten
from evaluators import CaseField
from ragpulse_sdk import attributes, record_rag
from testkit.collector_runner import wait_for
from testkit.judges import NoCallsJudge
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import Collect, encode, provider
from testkit.scrape import scrape

NODES = [("d3", "Lyon is in France.", 0.9), ("d1", "Paris is the capital of France.", 0.8), ("d7", "", None)]


def _spans(**span_attributes: Any) -> list[Span]:
    collect = Collect()
    with provider(collect).get_tracer("app").start_as_current_span("answer") as span:
        record_rag(span, "Capital of France?", NODES, "Paris.", reference_context_ids=["d1", "d2"])
        span.set_attributes(span_attributes)
    return flatten(decode(encode(collect.spans)))


def _record(**span_attributes: Any) -> RagRecord:
    spans = _spans(**span_attributes)
    (record,) = extract(spans[0].trace_id, spans)
    return record


def test_record_rag_to_test_case_round_trip_scores_with_no_judge_call() -> None:
    record = _record()
    assert record.reference_context_ids == ("d1", "d2")
    case = to_test_case(record)
    assert case.retrieved_context_ids == ["d3", "d1", "d7"]  # the nodes' ids, in rank order
    assert case.reference_context_ids == ["d1", "d2"]
    assert {CaseField.RETRIEVED_CONTEXT_IDS, CaseField.REFERENCE_CONTEXT_IDS} <= filled_fields(case)
    metrics = ("retrieval_hit_rate", "retrieval_mrr", "retrieval_recall_at_k", "id_based_context_precision")
    result = asyncio.run(JudgeOnLoop(NoCallsJudge()).score(case, metrics))  # type: ignore[arg-type]
    assert {r.name: r.score for r in result.results} == {
        "retrieval_hit_rate": 1.0,
        "retrieval_mrr": 0.5,  # d1 at rank 2
        "retrieval_recall_at_k": 0.5,  # d1 of {d1, d2}
        "retrieval_precision_at_k": pytest.approx(1 / 3),  # d1 of [d3, d1, d7]
    }
    assert result.usage.calls == 0


def test_without_reference_ids_the_case_has_only_the_retrieved_ones() -> None:
    record = RagRecord("0" * 32, "0" * 16, "q", "a", nodes=(RetrievedNode("kb-0", "text"),))
    case = to_test_case(record)
    assert case.retrieved_context_ids == ["kb-0"] and case.reference_context_ids is None
    assert to_test_case(RagRecord("0" * 32, "0" * 16, "q", "a")).retrieved_context_ids is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("[1, 2]", "wrong_type"),
        ('{"ids": ["d1"]}', "wrong_type"),
        ("[not json", "invalid_json"),
        (42, "wrong_type"),
    ],
)
def test_a_malformed_attribute_is_the_apps_error_named(value: Any, reason: str) -> None:
    with pytest.raises(ExtractionError) as raised:
        _record(**{attributes.REFERENCE_CONTEXT_IDS: value})
    assert raised.value.reason == reason
    assert attributes.REFERENCE_CONTEXT_IDS in raised.value.detail


def test_sampling_runs_the_ranking_metrics_only_when_both_id_lists_are_there() -> None:
    sampler = Sampler(SamplingConfig(metrics=["faithfulness", "retrieval_hit_rate", "retrieval_mrr"]))
    with_ids = _record()
    assert sampler.decide(with_ids).metrics == ("faithfulness", "retrieval_hit_rate", "retrieval_mrr")
    without = RagRecord("0" * 32, "0" * 16, "q", "a", nodes=with_ids.nodes)
    assert sampler.decide(without).metrics == ("faithfulness",)
    textless = RagRecord(  # ids without passage text: ranking still runs
        "0" * 32, "0" * 16, "q", "", nodes=(RetrievedNode("d1", ""),), reference_context_ids=("d1",)
    )
    assert sampler.decide(textless).metrics == ("retrieval_hit_rate", "retrieval_mrr")


def test_ragpulse_run_exports_hit_rate_and_mrr(tmp_path: Path) -> None:
    """A trace carrying reference ids through the real sidecar: scores on /metrics like any metric."""
    config = tmp_path / "ragpulse.yaml"
    config.write_text(
        "sampling:\n  metrics: [faithfulness, retrieval_hit_rate, retrieval_mrr, retrieval_ndcg]\n"
        "metrics:\n  options:\n    retrieval_ndcg: {k: 1}\n"
    )
    collect = Collect()
    with provider(collect).get_tracer("app").start_as_current_span("answer") as span:
        record_rag(span, "Capital of France?", NODES, "Paris.", reference_context_ids=["d1", "d2"])
    with RagpulseProcess("--config", str(config), "--quiet-period", "0.3") as ragpulse:
        assert post_traces(ragpulse.otlp_port, encode(collect.spans))[0] == 200
        port = ragpulse.metrics_port
        wait_for(
            lambda: scrape(port).value("ragpulse_evaluations_total", metric="retrieval_ndcg") >= 1,
            60,
            "the ranking metrics scored",
        )
        metrics = scrape(port)
    assert metrics.mean_score("retrieval_hit_rate") == 1.0
    assert metrics.mean_score("retrieval_mrr") == 0.5
    assert metrics.mean_score("retrieval_ndcg") == 0.0  # k=1: only d3
    assert metrics.value("ragpulse_evaluations_total", metric="retrieval_mrr", outcome="passed") == 1


def test_record_rag_writes_ids_as_a_json_list_of_strings() -> None:
    (span,) = [s for s in _spans() if attributes.REFERENCE_CONTEXT_IDS in s.attributes]
    assert json.loads(str(span.attributes[attributes.REFERENCE_CONTEXT_IDS])) == ["d1", "d2"]
