"""TruLens-style chain-of-thought reasons (`reasoning="cot"`) on the RAG triad: faithfulness
(groundedness), contextual relevancy (context relevance) and answer relevancy.

Through `OpenAIJudge` -> the real `openai` client -> the scripted server, which writes a longer,
evidence-quoting reason when the prompt asks for one.
"""

from __future__ import annotations

import json

import pytest

from collector.config import Settings
from evaluators import (
    AnswerRelevancy,
    ContextualRelevancy,
    Faithfulness,
    OpenAIJudge,
    TestCase,
    a_evaluate,
    create_metric,
)
from evaluators.judges.prompts import COT_REASON_RULE, REASON_RULE
from testkit.openai_server import ScriptedOpenAIServer

CASE = TestCase(
    input="How tall is the Eiffel Tower?",
    actual_output="The Eiffel Tower is 330 metres tall. It was painted gold in 2020.",
    retrieval_context=["The Eiffel Tower is 330 metres tall.", "The tower was completed in 1889."],
)


def prompts_of(server: ScriptedOpenAIServer) -> list[str]:
    return [r.body["messages"][1]["content"] for r in server.chat_requests]


async def test_cot_faithfulness_quotes_the_evidence_and_keeps_the_score(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    openai_server.script.task_verdicts[("supported", "painted gold")] = "idk"
    plain = await Faithfulness().a_measure(CASE, openai_judge)
    cot = await Faithfulness(reasoning="cot").a_measure(CASE, openai_judge)
    assert plain.score == cot.score == 0.5
    extraction, plain_verdicts, _, cot_verdicts = prompts_of(openai_server)
    assert REASON_RULE in plain_verdicts and COT_REASON_RULE not in plain_verdicts
    assert COT_REASON_RULE in cot_verdicts and REASON_RULE not in cot_verdicts
    assert COT_REASON_RULE not in extraction
    supported = cot.verdicts[0].reason
    assert (
        supported.startswith('Evidence: "The Eiffel Tower is 330 metres tall."')
        and "verdict is yes" in supported
    )
    assert plain.verdicts[0].reason == "scripted yes"
    # The chain of thought is paid in completion tokens, not in calls.
    assert cot.usage.calls == plain.usage.calls == 2
    assert cot.usage.completion_tokens > 2 * plain.usage.completion_tokens


async def test_cot_on_contextual_and_answer_relevancy(openai_server, openai_judge) -> None:
    results = (
        (
            await a_evaluate(
                [CASE], [ContextualRelevancy(reasoning="cot"), AnswerRelevancy(reasoning="cot")], openai_judge
            )
        )
        .cases[0]
        .by_name()
    )
    assert all(COT_REASON_RULE in prompt for prompt in prompts_of(openai_server) if "REFERENCES" in prompt)
    assert all(v.reason.startswith("Evidence: ") for r in results.values() for v in r.verdicts)
    assert results["contextual_relevancy"].score == results["answer_relevancy"].score == 1.0


async def test_cot_shares_the_claims_but_not_the_checks_of_plain_metrics(openai_server, openai_judge) -> None:
    """A CoT check is another question from a plain one: the claims are extracted once, the checks are
    asked apart (they would otherwise be merged into one call)."""
    await a_evaluate([CASE], [Faithfulness(reasoning="cot"), AnswerRelevancy()], openai_judge)
    assert sorted(openai_server.operations()) == ["claims", "verdicts_relevant", "verdicts_supported"]
    await a_evaluate([CASE], [Faithfulness(reasoning="cot"), AnswerRelevancy(reasoning="cot")], openai_judge)
    assert sorted(openai_server.operations()[3:]) == ["checks", "claims"]


async def test_a_template_reason_wins_over_cot(openai_server, openai_judge) -> None:
    own = "reason: one word."
    metric = Faithfulness(reasoning="cot", template={"reason": own})
    await metric.a_measure(CASE, openai_judge)
    verdicts = prompts_of(openai_server)[1]
    assert own in verdicts and COT_REASON_RULE not in verdicts


def test_reasoning_is_checked_and_configurable_online() -> None:
    with pytest.raises(ValueError, match="reasoning must be 'verdicts' or 'cot'"):
        Faithfulness(reasoning="long")  # type: ignore[arg-type]
    assert create_metric("faithfulness", reasoning="cot").template == {"reason": COT_REASON_RULE}
    settings = Settings.model_validate({"metrics": {"options": {"faithfulness": {"reasoning": "cot"}}}})
    assert settings.metrics.options["faithfulness"] == {"reasoning": "cot"}
    with pytest.raises(ValueError, match="contextual_precision: unknown option 'reasoning'"):
        Settings.model_validate({"metrics": {"options": {"contextual_precision": {"reasoning": "cot"}}}})


async def test_the_offline_judge_ignores_it() -> None:
    from evaluators.offline import OfflineJudge

    judge = OfflineJudge()
    plain = await Faithfulness().a_measure(CASE, judge)
    cot = await Faithfulness(reasoning="cot").a_measure(CASE, judge)
    assert json.dumps([v.model_dump() for v in cot.verdicts]) == json.dumps(
        [v.model_dump() for v in plain.verdicts]
    )
    assert cot.score == plain.score
