"""Pairwise comparison online: an app running two versions side by side (a shadow or A/B run) records
the other version's answer with `record_rag(baseline_output=...)`; the sidecar compares the two."""

from __future__ import annotations

from typing import Any

from collector.conventions import extract
from collector.judging.cases import to_test_case
from collector.judging.scorers import JudgeOnLoop
from collector.receivers.decode import decode
from collector.records import RagRecord
from collector.sampling.sampler import Sampler, SamplingConfig
from collector.spans import flatten
from evaluators import OpenAIJudge
from ragpulse_sdk import record_rag
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer
from testkit.rag_traces import Collect, encode, provider

QUESTION = "How long is the free trial?"
NODES = [("kb-7", "The free trial lasts 30 days and needs no credit card.", 0.9)]
ANSWER, SHADOW = "The free trial lasts 30 days, no card needed.", "There is a trial period."


def _record(**options: Any) -> RagRecord:
    collect = Collect()
    with provider(collect).get_tracer("app").start_as_current_span("answer") as span:
        record_rag(span, QUESTION, NODES, ANSWER, **options)
    spans = flatten(decode(encode(collect.spans)))
    (record,) = extract(spans[0].trace_id, spans)
    return record


def test_the_baseline_answer_reaches_the_case_and_only_then_is_compared() -> None:
    sampler = Sampler(SamplingConfig(metrics=["faithfulness", "pairwise_preference"]))
    with_shadow = _record(baseline_output=SHADOW)
    assert to_test_case(with_shadow).baseline_output == SHADOW
    assert sampler.decide(with_shadow).metrics == ("faithfulness", "pairwise_preference")
    assert sampler.decide(_record()).metrics == ("faithfulness",)


async def test_the_sidecar_scores_this_answer_against_the_shadow_in_both_orders() -> None:
    script = JudgeScript(task_verdicts={("satisfies", f"Answer A:\n{ANSWER}"): "yes"}, default_verdict="no")
    with ScriptedOpenAIServer(script) as server:
        judge = OpenAIJudge("gpt-4o-mini", base_url=server.base_url, cache_size=0, timeout_s=10)
        result = await JudgeOnLoop(judge).score(
            to_test_case(_record(baseline_output=SHADOW)), ["pairwise_preference"]
        )
        assert len(server.chat_requests) == 2
    (pairwise,) = result.results
    assert pairwise.score == 1.0 and "in both orders" in pairwise.reason
