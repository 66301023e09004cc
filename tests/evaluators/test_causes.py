"""Failure causes come from the verdicts the metrics already computed: whom to call, at no extra cost.

With the offline judge on the demo's knowledge base (the answers `ragpulse demo` sends), with the LLM judge
over HTTP (the scripted server answering yes / no / idk), and on the arithmetic's edge cases.
"""

from __future__ import annotations

import pytest

from collector.commands.demo_corpus import TOPICS
from collector.sampling.sampler import SamplingConfig
from evaluators import (
    STAGE,
    Cause,
    MetricResult,
    OpenAIJudge,
    Outcome,
    TestCase,
    VerdictRecord,
    a_evaluate_case,
    create_metric,
    failure_causes,
    is_refusal,
    passage_relevance,
)
from evaluators.metrics.custom import parse_custom_metrics
from evaluators.offline import OfflineJudge
from testkit.openai_server import ScriptedOpenAIServer

PRODUCTION = SamplingConfig().metrics  # what `ragpulse run` scores by default
EIFFEL = TOPICS[0]


@pytest.fixture(scope="module")
def offline() -> OfflineJudge:
    return OfflineJudge()


def _case(answer: str, passages: list[str] | None = None) -> TestCase:
    passages = list(EIFFEL.passages) if passages is None else passages
    return TestCase(input=EIFFEL.question, actual_output=answer, retrieval_context=passages, context=passages)


async def _causes(case: TestCase, judge: object) -> tuple[dict[str, Cause], dict[str, MetricResult]]:
    result = await a_evaluate_case(case, [create_metric(n) for n in PRODUCTION], judge)  # type: ignore[arg-type]
    return failure_causes(case, result.results), result.by_name()


async def test_an_invented_number_is_a_contradicted_claim_and_names_the_passage(
    offline: OfflineJudge,
) -> None:
    causes, results = await _causes(_case(EIFFEL.invented), offline)
    # The same passage also fails hallucination: the answer contradicts it (1925 vs 1889, 512 vs 330).
    assert causes == {"faithfulness": Cause.CONTRADICTED_CLAIM, "hallucination": Cause.CONTRADICTED_CLAIM}
    claims = {v.item: (v.label, v.supporting_ids) for v in results["faithfulness"].verdicts}
    assert claims["It is 512 metres tall."] == ("contradicted", [1])  # passage 1 says 330 metres
    assert STAGE[Cause.CONTRADICTED_CLAIM] == "generation"


async def test_an_off_topic_answer_is_off_topic_not_a_retrieval_problem(offline: OfflineJudge) -> None:
    causes, results = await _causes(_case(EIFFEL.off_topic), offline)
    assert set(causes.values()) == {Cause.OFF_TOPIC}
    assert {"faithfulness", "answer_relevancy"} <= set(causes)
    assert [v.label for v in results["faithfulness"].verdicts] == ["not_found"]


async def test_a_grounded_answer_has_no_cause(offline: OfflineJudge) -> None:
    causes, _ = await _causes(_case(EIFFEL.grounded), offline)
    assert causes == {}


async def test_passages_about_something_else_blame_the_retriever(offline: OfflineJudge) -> None:
    elsewhere = [TOPICS[1].passages[0], TOPICS[1].passages[2]]  # refund policy, for an Eiffel question
    causes, results = await _causes(_case(EIFFEL.grounded, elsewhere), offline)
    relevance = passage_relevance(list(results.values()), 2)
    assert relevance == ["irrelevant", "irrelevant"]
    assert causes["contextual_relevancy"] is Cause.IRRELEVANT_CONTEXT
    assert causes["faithfulness"] is Cause.IRRELEVANT_CONTEXT
    assert all(STAGE[cause] == "retrieval" for cause in causes.values())


async def test_a_refusal_is_named_as_such(offline: OfflineJudge) -> None:
    causes, _ = await _causes(_case("I'm sorry, I cannot find that in the documents."), offline)
    assert causes and set(causes.values()) == {Cause.REFUSAL}


async def test_the_llm_judge_tells_contradicted_from_not_found(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script = openai_server.script
    script.task_verdicts[("supported", "512 metres")] = "no"
    script.task_verdicts[("supported", "Louis Renault")] = "idk"
    causes, results = await _causes(_case(EIFFEL.invented), openai_judge)
    labels = {v.item: v.label for v in results["faithfulness"].verdicts}
    assert labels == {
        "The Eiffel Tower was completed in 1925 by Louis Renault.": "not_found",
        "It is 512 metres tall.": "contradicted",
    }
    assert causes["faithfulness"] is Cause.CONTRADICTED_CLAIM


async def test_a_custom_criterion_fails_as_criteria_whatever_its_name(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    """Custom metrics are named freely in the config: their failures are criteria failures (the
    generator's), recognised by their kind, so the generation-failures alert counts them."""
    specs = parse_custom_metrics(
        {
            "politeness": {"kind": "geval", "criteria": "Is the answer polite?", "threshold": 0.9},
            "names_a_source": {"kind": "aspect", "definition": "Does the answer name its source?"},
        }
    )
    openai_server.script.rubric_score = 2
    openai_server.script.task_defaults["satisfies"] = "no"
    metrics = [spec.build(name) for name, spec in specs.items()]
    result = await a_evaluate_case(_case(EIFFEL.grounded), metrics, openai_judge)
    assert {r.name: r.outcome for r in result.results} == {
        "politeness": Outcome.FAILED,
        "names_a_source": Outcome.FAILED,
    }
    causes = failure_causes(_case(EIFFEL.grounded), result.results)
    assert causes == {"politeness": Cause.CRITERIA, "names_a_source": Cause.CRITERIA}
    assert {STAGE[cause] for cause in causes.values()} == {"generation"}


async def test_an_undecided_llm_judge_leaves_its_words_out_of_the_unmeasured_reason(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    """`hide_texts` keeps unmeasured reasons (they are ragpulse's words): an LLM judge's `idk` reason,
    which may quote the answer, is not one of them."""
    specs = parse_custom_metrics({"politeness": {"kind": "aspect", "definition": "Is it polite?"}})
    openai_server.script.task_defaults["satisfies"] = "idk"
    result = await a_evaluate_case(
        _case(EIFFEL.grounded), [specs["politeness"].build("politeness")], openai_judge
    )
    (politeness,) = result.results
    assert politeness.outcome is Outcome.UNMEASURED
    assert politeness.reason == "unmeasured: the judge could not decide"


def _failed(name: str, verdicts: list[VerdictRecord] | None = None, **details: object) -> MetricResult:
    return MetricResult(
        name=name, outcome=Outcome.FAILED, score=0.0, threshold=0.5, verdicts=verdicts or [], details=details
    )


def test_arithmetic_of_the_causes() -> None:
    case = TestCase(input="q", actual_output="An answer.", retrieval_context=["   "])
    assert failure_causes(case, [_failed("faithfulness"), _failed("contextual_recall")]) == {
        "faithfulness": Cause.NO_CONTEXT,
        "contextual_recall": Cause.NO_CONTEXT,
    }
    case = TestCase(input="q", actual_output="An answer.", retrieval_context=["p"], expected_output="e")
    passed = MetricResult(name="answer_relevancy", outcome=Outcome.PASSED, score=1.0, threshold=0.5)
    assert failure_causes(
        case,
        [
            _failed("contextual_recall"),
            _failed("tone", criterion="geval"),
            _failed("answer_correctness"),
            _failed("answer_relevancy_similarity", noncommittal=True),
            _failed("some_future_metric"),
            passed,
        ],
    ) == {
        "contextual_recall": Cause.INCOMPLETE_CONTEXT,
        "tone": Cause.CRITERIA,
        "answer_correctness": Cause.INCORRECT_ANSWER,
        "answer_relevancy_similarity": Cause.REFUSAL,  # noncommittal, in ragas' words
        "some_future_metric": Cause.UNKNOWN,
    }


def test_refusals_are_recognised_at_the_start_of_an_answer_only() -> None:
    assert is_refusal("I don't know.")
    assert is_refusal("The provided context does not mention the refund window.")
    assert is_refusal("Unfortunately, I can't help with that.")
    assert not is_refusal("Paris is the capital of France; sorry for the delay.")
    assert not is_refusal("Refunds are not possible after 30 days.")
