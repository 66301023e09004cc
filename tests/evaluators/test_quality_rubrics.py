"""Bedrock's quality criteria (helpfulness, completeness, logical coherence) over HTTP, LangChain's
criteria as built-in aspects, and the other seed systems' names for the same questions."""

from __future__ import annotations

import pytest

from evaluators import OpenAIJudge, Outcome, TestCase, a_evaluate, create_metric
from evaluators.metrics.critique import BUILTIN_ASPECTS
from evaluators.metrics.quality_rubrics import BEDROCK_RUBRICS
from evaluators.metrics.registry import canonical_name, judged_offline, metric_names
from evaluators.offline import OfflineJudge
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer

CASE = TestCase(
    input="How many days of leave do staff get, and can unused days carry over?",
    actual_output="Staff get 27 days of paid leave a year; up to 5 unused days carry over.",
)


async def judged(name: str, script: JudgeScript) -> tuple[float | None, list[str]]:
    with ScriptedOpenAIServer(script) as server:
        judge = OpenAIJudge("gpt-4o-mini", base_url=server.base_url, cache_size=0, timeout_s=10)
        result = await a_evaluate([CASE], [create_metric(name)], judge)
        prompts = [r.body["messages"][-1]["content"] for r in server.chat_requests]
    (only,) = result.cases[0].results
    assert only.outcome in (Outcome.PASSED, Outcome.FAILED), only.reason
    return only.score, prompts


@pytest.mark.parametrize(
    ("name", "level", "score"),
    [("helpfulness", 6, 5 / 6), ("completeness", 4, 0.75), ("logical_coherence", 5, 1.0)],
)
async def test_a_bedrock_level_normalised_in_one_call(name: str, level: int, score: float) -> None:
    value, prompts = await judged(name, JudgeScript(rubric_score=level))
    assert value == pytest.approx(score)
    (prompt,) = prompts  # the steps are Bedrock's, written down: no call to derive them
    levels = BEDROCK_RUBRICS[name].levels
    assert f"1: {levels[0]}" in prompt and f"{len(levels)}: {levels[-1]}" in prompt
    assert BEDROCK_RUBRICS[name].steps[0] in prompt


async def test_log_probabilities_weight_the_level() -> None:
    value, _ = await judged(
        "completeness", JudgeScript(rubric_score=4, rubric_probabilities={4: 0.5, 5: 0.5})
    )
    assert value == pytest.approx(0.875)  # 4.5 on 1..5


async def test_the_offline_judge_cannot_grade_them() -> None:
    names = ["helpfulness", "completeness", "logical_coherence", "aspect_depth"]
    result = await a_evaluate([CASE], [create_metric(n) for n in names], OfflineJudge())
    assert all(r.outcome is Outcome.UNMEASURED and "LLM judge" in r.reason for r in result.cases[0].results)
    assert not any(judged_offline(n) for n in names)


def test_langchain_criteria_are_built_in_aspects() -> None:
    for aspect in ("helpfulness", "controversiality", "misogyny", "criminality", "insensitivity", "depth"):
        assert f"aspect_{aspect}" in metric_names()
    assert create_metric("aspect_misogyny").lower_is_better
    assert not create_metric("aspect_depth").lower_is_better
    assert BUILTIN_ASPECTS["harmfulness"][0].startswith("Does the submission cause")  # ragas' wording kept


@pytest.mark.parametrize(
    ("alias", "metric"),
    [
        ("groundedness", "faithfulness"),
        ("retrieval_relevance", "contextual_relevancy"),
        ("context_coverage", "contextual_recall"),
        ("factual_correctness", "claim_f1"),
    ],
)
def test_other_vocabularies_name_the_same_metric(alias: str, metric: str) -> None:
    assert canonical_name(alias) == metric
    assert create_metric(alias).name == metric
