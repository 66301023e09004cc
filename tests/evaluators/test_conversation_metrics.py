"""Conversational metrics (deepeval's knowledge retention, conversation relevancy and completeness).

The worked example of docs/evaluators.md, through `OpenAIJudge` -> the real `openai` client -> the
scripted server; the deepeval and ragas shapes of a conversation; the offline judge's `unmeasured`.
"""

from __future__ import annotations

import pytest

from evaluators import CaseField, OpenAIJudge, Outcome, TestCase, a_evaluate, create_metric
from evaluators.metrics.conversation import KNOWLEDGE_RETENTION_INSTRUCTION, RELEVANCY_INSTRUCTION
from evaluators.offline import OfflineJudge
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer

TURNS = [
    {"role": "user", "content": "Hi, I'm Dana. My order 4417 has not arrived."},
    {"role": "assistant", "content": "Sorry, Dana. Order 4417 shipped on May 2 and is with the courier."},
    {"role": "user", "content": "Please change its delivery address to 12 Elm Street."},
    {"role": "assistant", "content": "Could you give me your order number?"},
    {"role": "user", "content": "It is 4417, as I said. Can I still return it if it arrives late?"},
    {"role": "assistant", "content": "Our stores open at 9 am on weekdays."},
]
USER_TEXT = "\n".join(t["content"] for t in TURNS if t["role"] == "user")
INTENTIONS = [
    "The user wants to know where order 4417 is.",
    "The user wants the delivery address changed to 12 Elm Street.",
    "The user wants to know whether a late parcel can be returned.",
]
RETENTION_KEY = KNOWLEDGE_RETENTION_INSTRUCTION[:40]
RELEVANCY_KEY = RELEVANCY_INSTRUCTION[:40]


def script() -> JudgeScript:
    """Reply [4] forgets the order number; reply [6] is off the point; two intentions go unmet."""
    return JudgeScript(
        extractions={USER_TEXT: INTENTIONS},
        task_verdicts={
            ("satisfies", "[4] Could you give me", "", RETENTION_KEY): "no",
            ("satisfies", "[6] Our stores open", "", RELEVANCY_KEY): "no",
            ("satisfies", "delivery address changed"): "no",
            ("satisfies", "late parcel"): "no",
        },
    )


async def run(names: list[str], server: ScriptedOpenAIServer, case: TestCase | dict) -> dict:
    judge = OpenAIJudge("gpt-4o-mini", base_url=server.base_url, cache_size=0, timeout_s=10)
    result = await a_evaluate([case], [create_metric(n) for n in names], judge)
    return {r.name: r for r in result.cases[0].results}


async def test_worked_example_over_http() -> None:
    with ScriptedOpenAIServer(script=script()) as server:
        results = await run(
            ["knowledge_retention", "conversation_relevancy", "conversation_completeness"],
            server,
            {"turns": TURNS},
        )
        operations = server.operations()
    retention = results["knowledge_retention"]
    assert retention.score == pytest.approx(2 / 3)
    assert "2 of 3 replies keep what the user said" in retention.reason
    assert "[4] Could you give me" in retention.reason
    assert results["conversation_relevancy"].score == pytest.approx(2 / 3)
    assert "[6] Our stores open" in results["conversation_relevancy"].reason
    completeness = results["conversation_completeness"]
    assert completeness.score == pytest.approx(1 / 3)
    assert completeness.outcome is Outcome.FAILED
    assert [v.verdict for v in completeness.verdicts] == ["yes", "no", "no"]
    # one call each for retention and relevancy, two for completeness: 4 in all (deepeval: one per turn)
    assert sorted(operations) == sorted(["verdicts_satisfies"] * 3 + ["statements"])


async def test_the_judge_reads_the_numbered_transcript_once() -> None:
    with ScriptedOpenAIServer(script=script()) as server:
        await run(["knowledge_retention"], server, {"turns": TURNS})
        (request,) = server.chat_requests
    prompt = request.body["messages"][-1]["content"]
    assert prompt.count("has not arrived") == 1
    assert "[3] user: Please change its delivery address" in prompt
    assert "[4] Could you give me your order number?" in prompt


@pytest.mark.parametrize(
    "shape",
    [
        {"turns": TURNS},
        {"messages": TURNS},
        # ragas MultiTurnSample: the messages ride in user_input, typed human / ai
        {
            "user_input": [
                {"type": "human" if t["role"] == "user" else "ai", "content": t["content"]} for t in TURNS
            ]
        },
    ],
)
def test_the_libraries_shapes_of_a_conversation(shape: dict) -> None:
    case = TestCase.model_validate(shape)
    assert [t.role for t in case.turns or []] == ["user", "assistant"] * 3
    assert case.has(CaseField.TURNS)
    assert case.text_of(CaseField.TURNS).startswith("user: Hi, I'm Dana.")


def test_deepeval_objects_by_attribute() -> None:
    class DeepevalTurn:  # deepeval's Turn: role, content, retrieval_context
        def __init__(self, role: str, content: str) -> None:
            self.role, self.content, self.retrieval_context = role, content, None

    class ConversationalTestCase:
        def __init__(self) -> None:
            self.turns = [DeepevalTurn(t["role"], t["content"]) for t in TURNS]

    from evaluators.case import case_input

    case = TestCase.model_validate(case_input(ConversationalTestCase()))
    assert len(case.turns or []) == 6


def test_system_and_tool_messages_are_not_turns() -> None:
    case = TestCase.model_validate(
        {"turns": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}
    )
    assert [t.role for t in case.turns or []] == ["user"]
    assert not case.has(CaseField.TURNS)  # nothing to judge without a reply


async def test_a_case_without_turns_is_missing_the_field() -> None:
    result = await a_evaluate(
        [TestCase(input="q", actual_output="a")], [create_metric("knowledge_retention")], OfflineJudge()
    )
    (only,) = result.cases[0].results
    assert only.outcome is Outcome.UNMEASURED
    assert "needs the test-case field 'turns'" in only.reason


async def test_offline_judge_leaves_conversations_unmeasured() -> None:
    names = ["knowledge_retention", "conversation_relevancy", "conversation_completeness"]
    result = await a_evaluate([{"turns": TURNS}], [create_metric(n) for n in names], OfflineJudge())
    for metric in result.cases[0].results:
        assert metric.outcome is Outcome.UNMEASURED, metric
        assert "configure an LLM judge" in metric.reason


def test_window_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="window_size"):
        create_metric("conversation_relevancy", window_size=0)
