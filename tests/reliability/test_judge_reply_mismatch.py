"""Weak judge replies: a verdict list that does not line up with the items asked about is matched item
by item (by the index or text each verdict echoes); what matched is scored, only what did not is
`unmeasured`, and `ragpulse_judge_reply_mismatches_total{metric}` counts it. Nothing matched: an error,
as before. Real HTTP through the `openai` client, against the scripted judge, as the sidecar wires it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from collector.judging.evaluator import RecordEvaluator
from collector.judging.scorers import JudgeOnLoop
from collector.metrics import REGISTRY
from collector.records import RagRecord, RetrievedNode
from collector.stages import Evaluation, Outcome
from evaluators import OpenAIJudge
from testkit.judge_script import JudgeScript
from testkit.openai_server import ScriptedOpenAIServer

CLAIMS = ("The Eiffel Tower was completed in 1889.", "It is 330 metres tall.", "It is painted gold.")
PASSAGES = (
    "The Eiffel Tower was completed in March 1889.",
    "The tower is 330 metres tall.",
    "Paris has many bakeries.",
)
CORE = ("faithfulness", "answer_relevancy", "hallucination", "context_utilization")
UNJUDGED = "the judge gave no verdict for this"


def _record(response: str = " ".join(CLAIMS)) -> RagRecord:
    return RagRecord(
        trace_id="0" * 31 + "1",
        anchor_span_id="0" * 15 + "1",
        query="Tell me about the Eiffel Tower.",
        response=response,
        nodes=tuple(RetrievedNode(f"n{i}", text) for i, text in enumerate(PASSAGES)),
    )


def _mismatches(metric: str) -> float:
    """The counter as exported (None until its first increment)."""
    value = REGISTRY.get_sample_value("ragpulse_judge_reply_mismatches_total", {"metric": metric})
    return value or 0.0


@pytest.fixture
def server() -> ScriptedOpenAIServer:
    script = JudgeScript(task_verdicts={("supported", "painted gold"): "no", ("useful", "bakeries"): "no"})
    with ScriptedOpenAIServer(script) as server:
        yield server


async def _evaluate(
    server: ScriptedOpenAIServer, metrics: tuple[str, ...], record: RagRecord | None = None
) -> tuple[dict[str, Evaluation], dict[str, float]]:
    judge = OpenAIJudge("scripted-judge", base_url=server.base_url, timeout_s=5, max_retries=0, cache_size=0)
    before = {m: _mismatches(m) for m in metrics}
    evaluations, _ = await RecordEvaluator(JudgeOnLoop(judge)).evaluate(record or _record(), list(metrics))
    moved = {m: _mismatches(m) - before[m] for m in metrics}
    return {e.metric: e for e in evaluations}, moved


def _verdicts(evaluation: Evaluation) -> list[tuple[str, str]]:
    return [(v.item, v.verdict) for v in evaluation.verdicts]


async def test_a_missing_verdict_leaves_only_its_claim_unmeasured(server: ScriptedOpenAIServer) -> None:
    server.failing = "short"  # the first claim's verdict left out, in the reply and in its repair
    evaluations, moved = await _evaluate(server, ("faithfulness",))
    faith = evaluations["faithfulness"]
    assert faith.outcome in (Outcome.PASSED, Outcome.FAILED) and faith.score == 0.5  # 1 of the 2 judged
    assert _verdicts(faith) == [(CLAIMS[0], "unmeasured"), (CLAIMS[1], "yes"), (CLAIMS[2], "no")]
    assert faith.verdicts[0].reason == f"{UNJUDGED} claim"
    assert "2 of 3 claims judged" in faith.reason
    assert moved == {"faithfulness": 1}
    verdict_requests = [r for r in server.chat_requests if r.operation == "verdicts_supported"]
    assert len(verdict_requests) == 2  # one repair turn, naming what was missing, then scored as it stands
    assert "no verdict for item 0" in verdict_requests[1].body["messages"][-1]["content"]


async def test_verdicts_out_of_order_are_matched_by_the_claim_they_echo(server: ScriptedOpenAIServer) -> None:
    server.failing = "reordered"  # reversed, each verdict naming its claim by text, not by index
    evaluations, moved = await _evaluate(server, ("faithfulness",))
    faith = evaluations["faithfulness"]
    assert _verdicts(faith) == [(CLAIMS[0], "yes"), (CLAIMS[1], "yes"), (CLAIMS[2], "no")]
    assert faith.score == pytest.approx(2 / 3) and faith.reason.startswith("2 of 3 claims supported")
    assert moved == {"faithfulness": 1}
    assert len([r for r in server.chat_requests if r.operation == "verdicts_supported"]) == 1  # no repair


async def test_an_extra_verdict_is_ignored_and_counted(server: ScriptedOpenAIServer) -> None:
    server.failing = "extra"  # one verdict more, about an item index beyond the claims
    evaluations, moved = await _evaluate(server, ("faithfulness",))
    faith = evaluations["faithfulness"]
    assert _verdicts(faith) == [(CLAIMS[0], "yes"), (CLAIMS[1], "yes"), (CLAIMS[2], "no")]
    assert faith.score == pytest.approx(2 / 3)
    assert "matched no claim" in faith.reason
    assert moved == {"faithfulness": 1}


async def test_a_short_merged_reply_scores_every_core_metric_on_what_matched(
    server: ScriptedOpenAIServer,
) -> None:
    server.failing = "short"  # every verdict request loses its first item's verdicts
    evaluations, moved = await _evaluate(server, CORE)
    # Faithfulness and answer relevancy judge the same claims: one merged request (and its repair).
    assert [r.operation for r in server.chat_requests].count("checks") == 2
    assert {m: e.outcome for m, e in evaluations.items()} == {
        "faithfulness": Outcome.PASSED,
        "answer_relevancy": Outcome.PASSED,
        "hallucination": Outcome.PASSED,
        "context_utilization": Outcome.PASSED,
    }
    assert (evaluations["faithfulness"].score, evaluations["answer_relevancy"].score) == (0.5, 1.0)
    assert (evaluations["hallucination"].score, evaluations["context_utilization"].score) == (0.0, 1.0)
    for evaluation in evaluations.values():
        first, *rest = evaluation.verdicts
        assert first.verdict == "unmeasured" and first.reason.startswith(UNJUDGED)
        assert all(v.verdict != "unmeasured" for v in rest) and len(rest) == 2
        assert "2 of 3" in evaluation.reason
    assert moved == dict.fromkeys(CORE, 1)


async def test_an_unjudged_passage_is_neither_relevant_nor_irrelevant(server: ScriptedOpenAIServer) -> None:
    server.failing = "short"  # the first passage's verdict left out
    record = replace(_record(), expected_output=CLAIMS[1])
    evaluations, moved = await _evaluate(server, ("contextual_precision",), record)
    precision = evaluations["contextual_precision"]
    assert precision.score == 1.0 and "2 of 3 nodes judged" in precision.reason  # the useful one ranks first
    assert precision.passage_relevance == (None, "relevant", "irrelevant")
    assert moved == {"contextual_precision": 1}


async def test_a_reply_matching_no_item_is_an_error_as_before(server: ScriptedOpenAIServer) -> None:
    server.failing = "short"  # one claim, and its verdict left out: nothing to score
    evaluations, moved = await _evaluate(server, ("faithfulness",), _record(CLAIMS[0]))
    faith = evaluations["faithfulness"]
    assert faith.outcome is Outcome.ERROR and faith.score is None
    assert "no verdict matched any of the 1 items" in faith.reason
    assert moved == {"faithfulness": 1}
    replies = [json.loads(r.reply) for r in server.chat_requests if r.operation == "verdicts_supported"]
    assert len(replies) == 2  # asked, then repaired once
