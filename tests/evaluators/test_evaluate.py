"""`evaluate` and `a_evaluate_case`: shared judge work, aggregates, and results instead of exceptions."""

from __future__ import annotations

import pytest

from evaluators import (
    AnswerRelevancy,
    AnswerSimilarity,
    ContextualPrecision,
    ContextualRecall,
    Faithfulness,
    Hallucination,
    OpenAIJudge,
    Outcome,
    TestCase,
    a_evaluate_case,
    evaluate,
)
from testkit.openai_server import ScriptedOpenAIServer

CASE = {
    "question": "What is the capital of France?",
    "answer": "Paris is the capital of France. Paris hosts the Louvre.",
    "contexts": [
        "Paris is the capital of France.",
        "The Louvre is a museum in Paris.",
        "Berlin is in Germany.",
    ],
    "ground_truth": "The capital of France is Paris.",
}


async def test_four_core_metrics_take_four_calls(openai_server: ScriptedOpenAIServer, openai_judge) -> None:
    metrics = [Faithfulness(), AnswerRelevancy(), ContextualPrecision(), ContextualRecall()]
    result = await a_evaluate_case(CASE, metrics, openai_judge, case_id="paris")
    assert [r.outcome for r in result.results] == [Outcome.PASSED] * 4
    assert sorted(openai_server.operations()) == [
        "checks",
        "claims",
        "statements_supported",
        "verdicts_useful",
    ]
    assert result.usage.calls == 4 and result.case_id == "paris"


def test_evaluate_aggregates(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script.task_verdicts[("supported", "hosts the Louvre")] = "no"
    bad = dict(CASE, answer="Paris hosts the Louvre.", id="bad")  # 0.0, while CASE scores 0.5
    judge = OpenAIJudge("m", base_url=openai_server.base_url, timeout_s=2)
    seen: list[str] = []
    result = evaluate(
        [CASE, bad],
        [Faithfulness(), AnswerRelevancy()],
        judge,
        concurrency=2,
        on_case=lambda c: seen.append(c.case_id),
    )
    faithfulness = result.summary("faithfulness")
    assert faithfulness.mean == pytest.approx(0.25)
    assert faithfulness.pass_rate == pytest.approx(0.5)
    assert faithfulness.counts[Outcome.FAILED] == 1
    assert result.summary("answer_relevancy").mean == 1.0
    assert result.ragas_score == pytest.approx(2 / (1 / 0.25 + 1 / 1.0))
    assert sorted(seen) == ["0", "bad"] and [c.case_id for c in result.cases] == ["0", "bad"]
    assert result.judge == {"judge": "openai", "model": "m"}


async def test_judge_failure_is_an_error_result(openai_server: ScriptedOpenAIServer, openai_judge) -> None:
    openai_server.fail_next(*["500"] * 20)
    result = await a_evaluate_case(CASE, [Faithfulness(), AnswerRelevancy()], openai_judge)
    assert [r.outcome for r in result.results] == [Outcome.ERROR, Outcome.ERROR]
    assert all(r.score is None and r.passed is None for r in result.results)


async def test_missing_field_is_unmeasured_in_evaluate(openai_judge) -> None:
    case = {"question": CASE["question"], "answer": CASE["answer"]}  # neither context nor contexts
    result = await a_evaluate_case(case, [Hallucination()], openai_judge)
    (hallucination,) = result.results
    assert hallucination.outcome is Outcome.UNMEASURED and "'context'" in hallucination.reason


async def test_hallucination_falls_back_to_retrieved_contexts(openai_judge) -> None:
    """ragas datasets carry `contexts` only: hallucination judges against them and says so."""
    result = await a_evaluate_case(CASE, [Hallucination()], openai_judge)
    (hallucination,) = result.results
    assert hallucination.outcome is Outcome.PASSED and hallucination.score == 0.0
    assert "judged against the retrieval context" in hallucination.reason
    assert len(hallucination.verdicts) == len(CASE["contexts"])


async def test_invalid_case_is_an_error_result(openai_judge) -> None:
    result = await a_evaluate_case({"question": ["not", "a", "string"]}, [Faithfulness()], openai_judge)
    assert result.results[0].outcome is Outcome.ERROR


async def test_zero_embedding_is_unmeasured_not_nan(
    openai_server: ScriptedOpenAIServer, openai_judge
) -> None:
    openai_server.script.embeddings.update({"a": [0.0, 0.0], "b": [1.0, 0.0]})
    result = await a_evaluate_case(TestCase(answer="a", ground_truth="b"), [AnswerSimilarity()], openai_judge)
    assert result.results[0].outcome is Outcome.UNMEASURED and result.results[0].score is None


def test_duplicate_metric_names_are_refused(openai_judge) -> None:
    with pytest.raises(ValueError, match="faithfulness"):
        evaluate([CASE], [Faithfulness(), Faithfulness(mode="contradiction")], openai_judge)
