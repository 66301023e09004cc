"""Every metric end to end: OpenAIJudge -> real openai client -> HTTP -> scripted server.

The scripted verdicts reproduce METRICS.md's worked examples, so these also check that each metric
turns the judge's replies into the documented number.
"""

from __future__ import annotations

import math

import pytest

from evaluators import (
    AnswerCorrectness,
    AnswerRelevancy,
    AnswerRelevancySimilarity,
    AnswerSimilarity,
    AspectCritique,
    ContextEntityRecall,
    ContextualPrecision,
    ContextualRecall,
    ContextualRelevancy,
    ContextUtilization,
    Faithfulness,
    GEval,
    Hallucination,
    NoiseSensitivity,
    OpenAIJudge,
    Outcome,
    TestCase,
)
from testkit.openai_server import ScriptedOpenAIServer

NODES = [
    "NVIDIA makes chips for gaming.",
    "Google and Microsoft compete with chatbots.",
    "AI is an acronym for Artificial Intelligence.",
    "AI systems power virtual assistants.",
    "Robotics is a field of engineering.",
]
AI_CASE = TestCase(
    input="What is AI?",
    actual_output="AI is artificial intelligence. AI is used in virtual assistants.",
    retrieval_context=NODES,
    expected_output="AI, also known as Artificial Intelligence, is used to build complex systems for "
    "applications like virtual assistants, robotics, and autonomous vehicles.",
)


async def test_contextual_precision_worked_example(openai_server: ScriptedOpenAIServer, openai_judge) -> None:
    for node, verdict in zip(NODES, ["no", "yes", "yes", "no", "no"], strict=True):
        openai_server.script.task_verdicts[("useful", node)] = verdict
    result = await ContextualPrecision().a_measure(AI_CASE, openai_judge)
    assert result.score == pytest.approx(0.5833, abs=1e-4)
    assert result.outcome is Outcome.PASSED
    assert [v.verdict for v in result.verdicts] == ["no", "yes", "yes", "no", "no"]
    assert openai_server.operations() == ["verdicts_useful"]  # all five nodes in ONE call


async def test_context_utilization_judges_against_the_answer(openai_server, openai_judge) -> None:
    openai_server.script.task_verdicts[("useful", NODES[0])] = "no"
    result = await ContextUtilization().a_measure(AI_CASE, openai_judge)
    assert result.score == pytest.approx((1 / 1 * 0 + 1 / 2 + 2 / 3 + 3 / 4 + 4 / 5) / 4, abs=1e-4)
    refs = openai_server.chat_requests[0].body["messages"][1]["content"]
    assert "virtual assistants." in refs and "autonomous vehicles" not in refs


async def test_contextual_recall_worked_example(openai_server, openai_judge) -> None:
    statements = [
        "AI is also known as Artificial Intelligence.",
        "AI is used for virtual assistants, robotics, and autonomous vehicles.",
    ]
    openai_server.script.extractions[AI_CASE.expected_output] = statements
    openai_server.script.task_verdicts[("supported", "robotics")] = "no"
    result = await ContextualRecall().a_measure(AI_CASE, openai_judge)
    assert result.score == pytest.approx(0.5)
    assert [v.item for v in result.verdicts] == statements
    assert openai_server.operations() == ["statements_supported"]  # split and judged in one call


async def test_contextual_relevancy_nine_of_eleven(openai_server, openai_judge) -> None:
    statements = ["NVIDIA chips", "Google vs Microsoft chatbots", *(f"AI fact {i}" for i in range(9))]
    openai_server.script.extractions["\n\n".join(NODES)] = statements
    openai_server.script.task_verdicts[("relevant", "NVIDIA")] = "no"
    openai_server.script.task_verdicts[("relevant", "Google")] = "no"
    result = await ContextualRelevancy().a_measure(AI_CASE, openai_judge)
    assert result.score == pytest.approx(0.8182, abs=1e-4)
    assert len(openai_server.chat_requests) == 1


async def test_context_entity_recall_taj_mahal(openai_server, openai_judge) -> None:
    case = TestCase(expected_output="The Taj Mahal ...", retrieval_context=["The Taj Mahal is in Agra ..."])
    openai_server.script.extractions[case.expected_output] = [
        "Taj Mahal",
        "Yamuna",
        "Agra",
        "1631",
        "Shah Jahan",
        "Mumtaz Mahal",
    ]
    openai_server.script.extractions[case.retrieval_context[0]] = [
        "Taj Mahal",
        "Agra",
        "Shah Jahan",
        "Mumtaz Mahal",
        "India",
    ]
    result = await ContextEntityRecall().a_measure(case, openai_judge)
    assert result.score == pytest.approx(0.6667, abs=1e-4)
    assert {v.item for v in result.verdicts if v.verdict == "no"} == {"Yamuna", "1631"}


async def test_answer_relevancy_both_statements_relevant(openai_server, openai_judge) -> None:
    result = await AnswerRelevancy().a_measure(AI_CASE, openai_judge)
    assert result.score == 1.0
    assert len(result.verdicts) == 2


async def test_answer_relevancy_judges_a_factless_answer_by_its_statements(
    openai_server, openai_judge
) -> None:
    """'Yes.' states no claim, yet answers a yes/no question: deepeval judges an answer's statements.
    The statements are asked only when there is no claim; with none either, the answer as a whole."""
    openai_server.script.extractions["Yes."] = []
    openai_server.script.task_verdicts[("relevant", "Yes.")] = "yes"
    case = AI_CASE.model_copy(update={"input": "Is AI used in virtual assistants?", "actual_output": "Yes."})
    result = await AnswerRelevancy().a_measure(case, openai_judge)
    assert (result.score, [v.item for v in result.verdicts]) == (1.0, ["Yes."])
    assert openai_server.operations() == ["claims", "statements", "verdicts_relevant"]
    empty = await AnswerRelevancy().a_measure(case.model_copy(update={"actual_output": " "}), openai_judge)
    assert empty.outcome == Outcome.UNMEASURED


async def test_answer_relevancy_similarity_mean_cosine(openai_server, openai_judge) -> None:
    questions = ["q1?", "q2?", "q3?"]
    openai_server.script.questions = questions
    openai_server.script.embeddings["What is AI?"] = [1.0, 0.0]
    for question, cosine in zip(questions, [0.92, 0.91, 0.93], strict=True):
        openai_server.script.embeddings[question] = [cosine, math.sqrt(1 - cosine**2)]
    result = await AnswerRelevancySimilarity().a_measure(AI_CASE, openai_judge)
    assert result.score == pytest.approx(0.92, abs=1e-4)
    openai_server.script.noncommittal = True
    noncommittal = await AnswerRelevancySimilarity(n_questions=3).a_measure(
        AI_CASE.model_copy(update={"actual_output": "I don't know."}), openai_judge
    )
    assert noncommittal.score == 0.0


EINSTEIN = TestCase(
    input="When and where was Einstein born?",
    actual_output="Einstein was born in Germany. Einstein was born on 20th March 1879.",
    retrieval_context=[
        "Albert Einstein was a physicist.",
        "Albert Einstein was born 14 March 1879 in Germany.",
    ],
)


async def test_faithfulness_einstein_entailment(openai_server, openai_judge) -> None:
    openai_server.script.task_verdicts[("supported", "20th March")] = "no"
    result = await Faithfulness().a_measure(EINSTEIN, openai_judge)
    assert result.score == pytest.approx(0.5)
    assert result.verdicts[0].supporting_ids == [1]
    assert "20th March" in result.reason
    assert openai_server.operations() == ["claims", "verdicts_supported"]


async def test_faithfulness_contradiction_mode(openai_server, openai_judge) -> None:
    openai_server.script.task_verdicts[("contradicted", "20th March")] = "yes"
    result = await Faithfulness(mode="contradiction").a_measure(EINSTEIN, openai_judge)
    assert result.score == pytest.approx(0.5)
    assert openai_server.operations() == ["claims", "verdicts_contradicted"]


async def test_faithfulness_truths_extraction_limit(openai_server, openai_judge) -> None:
    result = await Faithfulness(truths_extraction_limit=1).a_measure(EINSTEIN, openai_judge)
    assert result.details["truths"] == ["Albert Einstein was a physicist."]
    assert "At most 1 items." in openai_server.chat_requests[1].body["messages"][1]["content"]


async def test_an_answer_without_claims_is_unmeasured_unless_a_score_is_chosen(
    openai_server, openai_judge
) -> None:
    openai_server.script.extractions["Hello!"] = []
    case = EINSTEIN.model_copy(update={"actual_output": "Hello!"})
    result = await Faithfulness().a_measure(case, openai_judge)
    assert (result.score, result.outcome) == (None, Outcome.UNMEASURED)
    assert "no checkable claim" in result.reason
    assert (await Hallucination().a_measure(case, openai_judge)).outcome == Outcome.UNMEASURED
    assert (await Faithfulness(zero_claims_score=1.0).a_measure(case, openai_judge)).score == 1.0
    assert (await Faithfulness(zero_claims_score=0.0).a_measure(case, openai_judge)).score == 0.0


async def test_hallucination_lower_is_better(openai_server, openai_judge) -> None:
    case = EINSTEIN.model_copy(
        update={"context": ["Einstein was born in Germany.", "Einstein was a physicist."]}
    )
    result = await Hallucination().a_measure(case, openai_judge)
    assert (result.score, result.outcome, result.lower_is_better) == (0.0, Outcome.PASSED, True)
    openai_server.script.task_verdicts[("contradicted", "born in Germany")] = "yes"
    openai_server.script.task_verdicts[("contradicted", "physicist")] = "yes"
    bad = await Hallucination(threshold=0.5).a_measure(case, openai_judge)
    assert (bad.score, bad.outcome) == (1.0, Outcome.FAILED)


LIC = TestCase(
    input="What is the Life Insurance Corporation of India known for?",
    actual_output="LIC is the largest insurer in India. LIC was founded in 1956. "
    "LIC is the largest bank in Asia.",
    retrieval_context=[
        "LIC is the largest insurance company in India, founded in 1956.",
        "A blog says LIC is the largest bank in Asia.",
    ],
    expected_output="LIC is the largest insurance company in India, established in 1956.",
)


async def test_noise_sensitivity_lic(openai_server, openai_judge) -> None:
    openai_server.script.task_verdicts[("supported", "largest bank")] = "no"
    result = await NoiseSensitivity().a_measure(LIC, openai_judge)
    assert result.score == pytest.approx(0.3333, abs=1e-4)
    assert result.outcome is Outcome.PASSED and result.lower_is_better


async def test_noise_sensitivity_irrelevant_variant(openai_server, openai_judge) -> None:
    script = openai_server.script
    script.task_verdicts[("supported", "largest bank", "A blog says")] = "yes"  # attributable to node 1
    script.task_verdicts[("supported", "largest bank")] = "no"  # but not in the expected output
    script.task_verdicts[("useful", "A blog says")] = "no"
    relevant = NoiseSensitivity(mode="relevant")
    irrelevant = NoiseSensitivity(mode="irrelevant")
    assert relevant.name == "noise_sensitivity_relevant"
    # the incorrect claim is attributed (by word overlap) to the irrelevant blog node only
    assert (await irrelevant.a_measure(LIC, openai_judge)).score == pytest.approx(0.3333, abs=1e-4)
    assert (await relevant.a_measure(LIC, openai_judge)).score == 0.0


async def test_answer_similarity_cosine(openai_server, openai_judge) -> None:
    case = TestCase(actual_output="a", expected_output="b")
    openai_server.script.embeddings.update({"a": [1.0, 0.0], "b": [0.6, 0.8]})
    assert (await AnswerSimilarity().a_measure(case, openai_judge)).score == pytest.approx(0.6)


async def test_answer_correctness_einstein(openai_server, openai_judge) -> None:
    case = TestCase(
        actual_output="Einstein was born in Spain. Einstein was born in 1879.",
        expected_output="Einstein was born in Germany. Einstein was born in 1879.",
    )
    openai_server.script.task_verdicts[("supported", "Spain")] = "no"
    openai_server.script.task_verdicts[("supported", "Germany")] = "no"
    result = await AnswerCorrectness(weights=(1.0, 0.0)).a_measure(case, openai_judge)
    assert result.score == pytest.approx(0.5)
    assert (result.details["tp"], result.details["fp"], result.details["fn"]) == (1, 1, 1)
    blended = await AnswerCorrectness().a_measure(case, openai_judge)
    assert blended.score == pytest.approx(0.75 * 0.5 + 0.25 * blended.details["similarity"])
    rounded = [
        await AnswerCorrectness(weights=(1.0, 0.0), round_at=t).a_measure(case, openai_judge)
        for t in (0.5, 0.6)
    ]
    assert [r.score for r in rounded] == [
        1.0,
        0.0,
    ]  # ragas' optional threshold: 0.5 rounds up at 0.5, down at 0.6


async def test_aspect_critique_majority_vote(openai_server, openai_judge) -> None:
    harmful = AspectCritique("harmfulness")
    openai_server.script.task_verdicts[("satisfies", "Submission")] = "yes"
    result = await harmful.a_measure(AI_CASE, openai_judge)
    assert (harmful.name, result.score, result.outcome) == ("aspect_harmfulness", 1.0, Outcome.FAILED)
    assert len(openai_server.chat_requests) == 3  # strictness votes
    custom = AspectCritique("Mentions Robots", "Does the submission mention robots?", strictness=1)
    assert custom.name == "aspect_mentions_robots"
    assert (await custom.a_measure(AI_CASE, openai_judge)).score == 1.0


async def test_geval_plain_score_without_logprobs(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.logprobs_supported = False
    judge = OpenAIJudge("m", base_url=openai_server.base_url, timeout_s=2)
    metric = GEval("RAG Fact Checker", criteria="Check facts against the expected output.")
    result = await metric.a_measure(AI_CASE, judge)
    assert metric.name == "geval_rag_fact_checker"
    assert result.score == pytest.approx((7 - 1) / 9)
    assert result.details["weighted"] is False
    assert openai_server.operations() == ["steps", "rubric"]


async def test_geval_probability_weighted_with_logprobs(openai_server, openai_judge) -> None:
    openai_server.script.rubric_probabilities = {5: 0.3, 6: 0.1}
    metric = GEval(
        "fact",
        evaluation_steps=["List statements.", "Penalise invented content."],
        evaluation_params=["input", "actual_output", "expected_output"],
    )
    result = await metric.a_measure(AI_CASE, openai_judge)
    assert result.score == pytest.approx(0.4722, abs=1e-4)
    assert openai_server.operations() == ["rubric"]  # steps given: no step-writing call
    assert openai_server.chat_requests[0].body["top_logprobs"] == 20


async def test_missing_field_raises_before_any_call(openai_server, openai_judge) -> None:
    with pytest.raises(ValueError, match="expected_output"):
        await ContextualPrecision().a_measure(TestCase(input="q", retrieval_context=["n"]), openai_judge)
    assert openai_server.requests == []


async def test_strict_mode_makes_scores_binary(openai_server, openai_judge) -> None:
    openai_server.script.task_verdicts[("supported", "20th March")] = "no"
    result = await Faithfulness(strict_mode=True).a_measure(EINSTEIN, openai_judge)
    assert (result.score, result.threshold, result.outcome) == (0.0, 1.0, Outcome.FAILED)


def test_sync_measure(openai_server: ScriptedOpenAIServer) -> None:
    judge = OpenAIJudge("m", base_url=openai_server.base_url, timeout_s=2)
    result = AnswerRelevancy(include_reason=False).measure(AI_CASE, judge)
    assert (result.score, result.reason) == (1.0, "")
