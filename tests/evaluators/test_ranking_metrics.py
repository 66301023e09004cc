"""Retrieval ranking against reference ids: worked examples computed by hand, edge cases, ragas'
aliases, no judge at all, and `ragpulse eval` on a JSONL file with id fields."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from evaluators import CaseField, MissingFieldError, TestCase, evaluate, required_inputs
from evaluators.cli import main
from evaluators.metrics import (
    RetrievalAveragePrecision,
    RetrievalHitRate,
    RetrievalMRR,
    RetrievalNDCG,
    RetrievalPrecisionAtK,
    RetrievalRecallAtK,
    create_metric,
)
from evaluators.metrics.ranking import RANKING_METRICS
from evaluators.metrics.registry import ALIASES, canonical_name
from evaluators.scores import (
    UndefinedScoreError,
    average_precision,
    id_precision,
    id_recall,
    id_relevance,
    ndcg,
)
from testkit.judges import NoCallsJudge

RANKING = RANKING_METRICS
LOG2_3 = math.log2(3)  # the discount at rank 2


def scores_of(retrieved: list[Any], reference: list[Any], **options: Any) -> dict[str, float | None]:
    case = TestCase(retrieved_context_ids=retrieved, reference_context_ids=reference)
    return {name: create_metric(name, **options).measure(case).score for name in RANKING}


def test_the_worked_example() -> None:
    # retrieved [d3, d1, d7], reference {d1, d2}: d1 is the only hit, at rank 2.
    assert scores_of(["d3", "d1", "d7"], ["d1", "d2"]) == pytest.approx(
        {
            "retrieval_hit_rate": 1.0,  # a reference id was retrieved
            "retrieval_mrr": 1 / 2,  # first hit at rank 2
            # DCG = 1/log2(2+1) = 0.6309; IDCG = min(3 ranks, 2 references) = 2 ideal hits:
            # 1/log2(2) + 1/log2(3) = 1.6309; NDCG = 0.6309 / 1.6309 = 0.3869
            "retrieval_ndcg": (1 / LOG2_3) / (1 + 1 / LOG2_3),
            "retrieval_average_precision": (1 / 2) / 2,  # precision at rank 2 = 1/2, over 2 references
            "retrieval_precision_at_k": 1 / 3,  # 1 of 3 distinct retrieved ids is a reference
            "retrieval_recall_at_k": 1 / 2,  # 1 of 2 references retrieved
        }
    )


def test_two_hits_with_a_miss_between() -> None:
    # retrieved [d1, d9, d2], reference {d1, d2}: hits at ranks 1 and 3.
    assert scores_of(["d1", "d9", "d2"], ["d1", "d2"]) == pytest.approx(
        {
            "retrieval_hit_rate": 1.0,
            "retrieval_mrr": 1.0,
            # DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) = 1.6309; NDCG = 0.9197
            "retrieval_ndcg": 1.5 / (1 + 1 / LOG2_3),
            "retrieval_average_precision": (1 / 1 + 2 / 3) / 2,  # 0.8333
            "retrieval_precision_at_k": 2 / 3,
            "retrieval_recall_at_k": 1.0,
        }
    )


def test_k_cuts_the_ranking() -> None:
    # k=1 on [d3, d1, d7]: only d3, not a reference id: every metric is 0.
    assert set(scores_of(["d3", "d1", "d7"], ["d1", "d2"], k=1).values()) == {0.0}
    # k=2 on [d1, d9, d2]: [d1, d9]; DCG = 1, IDCG = min(2, 2) ideal hits = 1 + 1/log2(3).
    at_two = scores_of(["d1", "d9", "d2"], ["d1", "d2"], k=2)
    assert at_two["retrieval_precision_at_k"] == 1 / 2 and at_two["retrieval_recall_at_k"] == 1 / 2
    assert at_two["retrieval_ndcg"] == pytest.approx(1 / (1 + 1 / LOG2_3))
    assert at_two["retrieval_average_precision"] == 1 / 2  # (1/1) over 2 references
    # A k beyond the ranking is the whole ranking.
    assert scores_of(["d3", "d1"], ["d1"], k=10) == scores_of(["d3", "d1"], ["d1"])


def test_ragas_documented_examples_through_the_aliases() -> None:
    """ragas' docs: precision of [doc_1..doc_4] against [doc_1, doc_4, doc_5, doc_6] is 0.5, recall of
    [doc_1, doc_2, doc_3] against the same references is 0.25."""
    reference = ["doc_1", "doc_4", "doc_5", "doc_6"]
    precision = create_metric("id_based_context_precision")
    recall = create_metric("id_based_context_recall")
    assert precision.measure({"retrieved_context_ids": ["doc_1", "doc_2", "doc_3", "doc_4"],
                              "reference_context_ids": reference}).score == 0.5  # fmt: skip
    assert recall.measure({"retrieved_context_ids": ["doc_1", "doc_2", "doc_3"],
                           "reference_context_ids": reference}).score == 0.25  # fmt: skip
    assert isinstance(precision, RetrievalPrecisionAtK) and isinstance(recall, RetrievalRecallAtK)
    assert canonical_name("id_based_context_precision") == "retrieval_precision_at_k"
    assert ALIASES["id_based_context_recall"] == "retrieval_recall_at_k"


def test_repeated_ids_count_once() -> None:
    # [d1, d1, d2] against {d1}: sets for precision/recall as LlamaIndex and ragas do (distinct retrieved
    # {d1, d2}: precision 1/2); the repeat at rank 2 gains nothing, so NDCG and AP stay 1 where
    # LlamaIndex's per-position sums would give 1 + 1/log2(3) = 1.63 and (1/1 + 1/2) / 1 = 1.5.
    assert scores_of(["d1", "d1", "d2"], ["d1"]) == {
        "retrieval_hit_rate": 1.0,
        "retrieval_mrr": 1.0,
        "retrieval_ndcg": 1.0,
        "retrieval_average_precision": 1.0,
        "retrieval_precision_at_k": 0.5,
        "retrieval_recall_at_k": 1.0,
    }
    result = RetrievalNDCG().measure({"retrieved_ids": ["d1", "d1"], "expected_ids": ["d1"]})
    assert [(v.item, v.verdict, v.reason) for v in result.verdicts] == [
        ("d1", "yes", ""),
        ("d1", "no", "repeats rank 1"),
    ]


def test_ids_compare_as_text_and_come_under_llamaindex_names_too() -> None:
    case = TestCase(retrieved_ids=[7, 2], expected_ids="2")  # ragas takes integer ids; a lone id
    assert case.retrieved_context_ids == ["7", "2"] and case.reference_context_ids == ["2"]
    assert RetrievalMRR().measure(case).score == 0.5
    assert TestCase(retrieved_context_ids='["a", 3]').retrieved_context_ids == ["a", "3"]  # a CSV cell
    assert TestCase(retrieved_context_ids=" ").retrieved_context_ids is None
    assert not TestCase(reference_context_ids=["", " "]).has(CaseField.REFERENCE_CONTEXT_IDS)
    # Exact strings: "D1" is not "d1".
    assert RetrievalHitRate().measure({"retrieved_ids": ["D1"], "expected_ids": ["d1"]}).score == 0.0


def test_a_ragas_sample_object_is_read_by_its_attribute_names() -> None:
    sample = SimpleNamespace(user_input="q", retrieved_context_ids=[1, 2, 3], reference_context_ids=[3])
    metric = create_metric("id_based_context_recall")
    (result,) = evaluate([sample], [metric], NoCallsJudge()).cases[0].results
    assert result.score == 1.0


def test_a_miss_says_what_was_not_retrieved() -> None:
    result = RetrievalRecallAtK(k=2).measure(
        {"retrieved_ids": ["x", "d1", "d2"], "expected_ids": ["d2", "d1"]}
    )
    assert result.score == 0.5 and result.outcome == "passed"
    assert result.reason == "reference ids at ranks [2] of the first 2 retrieved; not retrieved: 'd2'"
    assert result.details == {"k": 2, "relevant_ranks": [2], "missing_reference_ids": ["d2"]}
    assert RetrievalHitRate().measure({"retrieved_ids": ["x"], "expected_ids": ["d1"]}).reason == (
        "no reference id among all 1 retrieved; not retrieved: 'd1'"
    )


@pytest.mark.parametrize("missing", [{}, {"reference_context_ids": []}, {"reference_context_ids": [" "]}])
def test_no_reference_ids_is_unmeasured_naming_the_field(missing: dict[str, Any]) -> None:
    case = {"retrieved_context_ids": ["d1"], **missing}
    with pytest.raises(MissingFieldError, match="reference_context_ids"):
        RetrievalHitRate().measure(case)
    results = evaluate([case], [create_metric(name) for name in RANKING], NoCallsJudge()).cases[0].results
    for result in results:
        assert result.outcome == "unmeasured" and result.score is None
        assert "'reference_context_ids', which is missing or empty" in result.reason, result


def test_no_retrieved_ids_is_unmeasured_naming_the_field() -> None:
    result = evaluate([{"expected_ids": ["d1"]}], [RetrievalMRR()], NoCallsJudge()).cases[0].results[0]
    assert result.outcome == "unmeasured" and "'retrieved_context_ids'" in result.reason


def test_the_arithmetic_refuses_empty_inputs_instead_of_nan() -> None:
    for undefined in (
        lambda: id_relevance([], {"d1"}),
        lambda: id_relevance(["d1"], set()),
        lambda: ndcg([], 1),
        lambda: ndcg([True], 0),
        lambda: average_precision([True], 0),
        lambda: id_precision([], {"d1"}),
        lambda: id_recall(["d1"], set()),
    ):
        with pytest.raises(UndefinedScoreError):
            undefined()


def test_no_judge_call_and_no_judge_needed() -> None:
    case = {"retrieved_ids": ["d3", "d1", "d7"], "expected_ids": ["d1", "d2"]}
    result = evaluate([case], [create_metric(name) for name in RANKING], NoCallsJudge())
    assert all(r.outcome in ("passed", "failed") for r in result.cases[0].results)
    assert result.usage.calls == 0 and result.usage.prompt_tokens == 0
    assert RetrievalAveragePrecision().measure(case).score == 0.25  # no judge passed anywhere
    with pytest.raises(ValueError, match="needs a judge"):  # judged metrics still need one
        create_metric("faithfulness").measure({"answer": "a", "contexts": ["c"]})


def test_declared_inputs_options_and_strict_mode() -> None:
    both = (CaseField.RETRIEVED_CONTEXT_IDS, CaseField.REFERENCE_CONTEXT_IDS)
    for name in (*RANKING, "id_based_context_precision", "id_based_context_recall"):
        assert required_inputs(name) == both
    with pytest.raises(ValueError, match="k must be a positive integer"):
        RetrievalPrecisionAtK(k=0)
    with pytest.raises(TypeError):
        create_metric("retrieval_mrr", granular=True)  # an unknown option is refused, as for every metric
    strict = RetrievalMRR(strict_mode=True).measure({"retrieved_ids": ["x", "d1"], "expected_ids": ["d1"]})
    assert strict.score == 0.0 and strict.threshold == 1.0 and not strict.passed


def test_ragpulse_eval_scores_ids_from_jsonl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    rows = [
        {"id": "ragas", "user_input": "q1", "retrieved_context_ids": ["d3", "d1", "d7"],
         "reference_context_ids": ["d1", "d2"]},
        {"id": "llamaindex", "question": "q2", "retrieved_ids": ["d1", "d9", "d2"],
         "expected_ids": ["d1", "d2"]},
        {"id": "no-reference", "question": "q3", "retrieved_ids": ["d1"]},
    ]  # fmt: skip
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = tmp_path / "ragpulse.yaml"
    config.write_text("metrics:\n  options:\n    retrieval_precision_at_k: {k: 2}\n")
    out = tmp_path / "report.json"
    metrics = (
        "retrieval_hit_rate,retrieval_mrr,retrieval_ndcg,retrieval_precision_at_k,id_based_context_recall"
    )
    args = [str(dataset), "--metrics", metrics, "--config", str(config), "--json", str(out), "--no-progress"]
    assert main(args) == 0
    report = json.loads(out.read_text())
    scores = {(case["case_id"], r["name"]): r["score"] for case in report["cases"] for r in case["results"]}
    assert scores[("ragas", "retrieval_mrr")] == 0.5
    assert scores[("llamaindex", "retrieval_mrr")] == 1.0
    assert scores[("ragas", "retrieval_precision_at_k")] == 0.5  # k=2 from the config: [d3, d1]
    assert scores[("llamaindex", "retrieval_recall_at_k")] == 1.0  # the ragas alias, under our name
    assert scores[("ragas", "retrieval_ndcg")] == pytest.approx((1 / LOG2_3) / (1 + 1 / LOG2_3))
    assert all(scores[("no-reference", name)] is None for name in ("retrieval_hit_rate", "retrieval_mrr"))
    summary = {m["name"]: m for m in report["metrics"]}
    assert summary["retrieval_hit_rate"]["mean"] == 1.0
    assert report["usage"]["calls"] == 0
    assert "reference_context_ids" in capsys.readouterr().out  # the most common unmeasured reason
