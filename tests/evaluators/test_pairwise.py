"""Pairwise comparison of two runs (LangChain pairwise_string, LlamaIndex PairwiseComparison): both
orders asked over HTTP, position bias read as a tie, and `ragpulse eval --pairwise-against`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators import OpenAIJudge, Outcome, TestCase, a_evaluate, create_metric
from evaluators.cli import main
from evaluators.judges.base import Verdict
from evaluators.metrics.pairwise import consensus
from evaluators.offline import OfflineJudge
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer

QUESTION = "How long is the free trial?"
CONTEXT = ["The free trial lasts 30 days and needs no credit card."]
GOOD = "The free trial lasts 30 days, no credit card needed."
VAGUE = "There is a trial period."


@pytest.mark.parametrize(
    ("this_first", "baseline_first", "score", "said"),
    [
        ("yes", "no", 1.0, "this run's answer is better"),
        ("no", "yes", 0.0, "the baseline's answer is better"),
        ("yes", "yes", 0.5, "position bias"),
        ("no", "no", 0.5, "neither answer is better"),
        ("yes", "idk", 1.0, "this run's answer is better"),
    ],
)
def test_consensus_of_the_two_orders(this_first: str, baseline_first: str, score: float, said: str) -> None:
    value, reason = consensus(Verdict(this_first), Verdict(baseline_first))  # type: ignore[arg-type]
    assert value == score and said in reason


def script() -> JudgeScript:
    """The judge prefers the precise answer whatever its position; with two vague answers, it prefers
    whichever comes first (the default 'yes'): the bias both orders expose."""
    return JudgeScript(
        task_verdicts={
            ("satisfies", f"Answer A:\n{GOOD}"): "yes",
            ("satisfies", f"Answer A:\n{VAGUE}\n\nAnswer B:\n{GOOD}"): "no",
        }
    )


async def test_both_orders_over_http() -> None:
    cases = [
        TestCase(
            id="better", input=QUESTION, retrieval_context=CONTEXT, actual_output=GOOD, baseline_output=VAGUE
        ),
        TestCase(
            id="worse", input=QUESTION, retrieval_context=CONTEXT, actual_output=VAGUE, baseline_output=GOOD
        ),
        TestCase(id="biased", input=QUESTION, actual_output=VAGUE, baseline_output=VAGUE + " Ask us."),
    ]
    with ScriptedOpenAIServer(script=script()) as server:
        judge = OpenAIJudge("gpt-4o-mini", base_url=server.base_url, cache_size=0, timeout_s=10)
        result = await a_evaluate(cases, [create_metric("pairwise_string")], judge)  # LangChain's name
        prompts = [r.body["messages"][-1]["content"] for r in server.chat_requests]
    scores = {c.case_id: c.results[0].score for c in result.cases}
    assert scores == {"better": 1.0, "worse": 0.0, "biased": 0.5}
    assert "position bias" in result.cases[2].results[0].reason
    assert len(prompts) == 6  # two calls per case, one per order
    assert sum(QUESTION in p and CONTEXT[0] in p for p in prompts) == 4  # question and passages shown


async def test_the_offline_judge_cannot_compare() -> None:
    case = TestCase(input=QUESTION, actual_output=GOOD, baseline_output=VAGUE)
    result = await a_evaluate([case], [create_metric("pairwise_comparison")], OfflineJudge())
    (only,) = result.cases[0].results
    assert only.outcome is Outcome.UNMEASURED and "configure an LLM judge" in only.reason


def test_eval_compares_two_runs_by_case_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    row = {"question": QUESTION, "contexts": CONTEXT}
    new, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    new.write_text(
        "\n".join(
            json.dumps({**row, "id": i, "answer": a}) for i, a in (("a", GOOD), ("b", VAGUE), ("c", GOOD))
        )
    )
    old.write_text(
        "\n".join(json.dumps({**row, "id": i, "answer": a}) for i, a in (("b", GOOD), ("a", VAGUE)))
    )
    out = tmp_path / "report.json"
    with ScriptedOpenAIServer(script=script()) as server:
        args = [str(new), "--metrics", "faithfulness", "--pairwise-against", str(old)]
        code = main([*args, "--base-url", server.base_url, "--json", str(out), "--no-progress"])
    assert code == 0
    report = json.loads(out.read_text())
    pairwise = next(m for m in report["metrics"] if m["name"] == "pairwise_preference")
    assert pairwise["mean"] == 0.5  # a: better (1), b: worse (0); c has no baseline answer
    assert pairwise["counts"]["unmeasured"] == 1
