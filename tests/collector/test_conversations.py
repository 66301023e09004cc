"""Conversations online: records sharing a conversation id are gathered, and judged once quiet.

Unit tests of the tracker and the sampler's conversation decision, then the real sidecar: three
traces of one OpenInference `session.id` through `ragpulse run`, judged by the scripted
OpenAI-compatible server, the conversational scores read from /metrics.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.assembly.conversations import ConversationConfig, ConversationTracker
from collector.records import RagRecord, RetrievedNode
from collector.sampling.sampler import Sampler, SamplingConfig, SamplingOutcome
from evaluators.metrics.conversation import KNOWLEDGE_RETENTION_INSTRUCTION, RELEVANCY_INSTRUCTION
from ragpulse_sdk import record_rag
from testkit.collector_runner import wait_for
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import Collect, encode, provider
from testkit.scrape import scrape

EXCHANGES = [  # (question, answer): the second answer forgets the order number, the third is off the point
    ("Hi, I'm Dana. My order 4417 has not arrived.", "Sorry, Dana. Order 4417 shipped on May 2."),
    ("Please change its delivery address to 12 Elm Street.", "Could you give me your order number?"),
    ("It is 4417, as I said. Can I return it if it arrives late?", "Our stores open at 9 am on weekdays."),
]
NODES = [("kb-1", "Orders ship within two days. Returns are accepted for 30 days after delivery.", 0.8)]


def turn(conversation: str, n: int, end: int) -> RagRecord:
    question, answer = EXCHANGES[n % 3]
    return RagRecord(
        f"{n:032x}", f"{n:016x}", question, answer, nodes=(RetrievedNode("kb-1", NODES[0][1]),),
        conversation_id=conversation, end_time_unix_nano=end,
    )  # fmt: skip


def test_a_conversation_is_judged_once_it_goes_quiet() -> None:
    tracker = ConversationTracker(ConversationConfig(idle_s=10))
    tracker.add(turn("c1", 1, end=200), now=0)
    tracker.add(turn("c1", 0, end=100), now=1)  # arrived late: the turns are ordered by end time
    tracker.add(turn("c2", 2, end=300), now=5)
    assert tracker.quiet(now=10.5) == []
    (closed,) = tracker.quiet(now=11)
    assert [t.trace_id for t in closed] == [f"{0:032x}", f"{1:032x}"]
    assert len(tracker) == 1
    assert [c[0].conversation_id for c in tracker.drain()] == ["c2"] and len(tracker) == 0


def test_records_without_a_conversation_and_redeliveries_are_not_turns() -> None:
    tracker = ConversationTracker(ConversationConfig(idle_s=10))
    assert tracker.add(turn("", 0, end=1), now=0) == [] and len(tracker) == 0
    tracker.add(turn("c1", 0, end=1), now=0)
    tracker.add(turn("c1", 0, end=1), now=1)  # the same trace and span again (a Kafka redelivery)
    assert [len(c) for c in tracker.drain()] == [1]


def test_bounds_judge_the_least_recently_active_early_and_keep_the_last_turns() -> None:
    tracker = ConversationTracker(ConversationConfig(idle_s=10, max_open=2, max_turns=2))
    for n in range(3):
        assert tracker.add(turn("c1", n, end=n), now=n) == []
    tracker.add(turn("c2", 10, end=10), now=3)
    (early,) = tracker.add(turn("c3", 11, end=11), now=4)  # c1 is the least recently active
    assert [t.trace_id for t in early] == [f"{1:032x}", f"{2:032x}"]  # its last two turns


def test_the_sampler_judges_conversations_with_the_conversational_metrics_only() -> None:
    names = ["faithfulness", "knowledge_retention", "conversation_completeness"]
    sampler = Sampler(SamplingConfig(metrics=names))
    assert sampler.conversation_metrics == ("knowledge_retention", "conversation_completeness")
    turns = tuple(turn("c1", n, end=n) for n in range(3))
    assert sampler.decide(turns[0]).metrics == ("faithfulness",)  # a record alone is no conversation
    decision = sampler.decide_conversation(turns)
    assert decision.metrics == ("knowledge_retention", "conversation_completeness")
    assert decision.case is not None and decision.case.id == turns[-1].trace_id
    assert [t.role for t in decision.case.turns or []] == ["user", "assistant"] * 3
    assert decision.case.turns and decision.case.turns[1].retrieval_context == [NODES[0][1]]
    none = Sampler(SamplingConfig(metrics=["faithfulness"])).decide_conversation(turns)
    assert none.decision is SamplingOutcome.NO_RAG_DATA
    rare = Sampler(SamplingConfig(metrics=names, rate=0.0)).decide_conversation(turns)
    assert rare.decision is SamplingOutcome.NOT_SAMPLED


def _conversation_spans() -> bytes:
    collect = Collect()
    tracer = provider(collect, service="shop-assistant").get_tracer("app")
    for question, answer in EXCHANGES:
        with tracer.start_as_current_span("chat") as span:
            record_rag(span, question, NODES, answer)
            span.set_attribute("session.id", "conversation-7")
    return encode(collect.spans)


@pytest.mark.timeout(180)
def test_ragpulse_run_scores_a_three_turn_conversation_when_it_goes_quiet(tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text(
        "sampling:\n"
        "  metrics: [faithfulness, knowledge_retention, conversation_relevancy, conversation_completeness]\n"
        "  conversations: {idle_s: 1.0}\n"
    )
    user_text = "\n".join(question for question, _ in EXCHANGES)
    script = JudgeScript(
        extractions={
            user_text: ["The user wants to know where order 4417 is.", "The user wants a new address."]
        },
        task_verdicts={
            ("satisfies", "Could you give me", "", KNOWLEDGE_RETENTION_INSTRUCTION[:40]): "no",
            ("satisfies", "Our stores open", "", RELEVANCY_INSTRUCTION[:40]): "no",
            ("satisfies", "a new address"): "no",
        },
    )
    with (
        ScriptedOpenAIServer(script) as judge,
        RagpulseProcess(
            "--config", str(config), "--quiet-period", "0.3", "--judge-base-url", judge.base_url
        ) as ragpulse,
    ):
        assert post_traces(ragpulse.otlp_port, _conversation_spans())[0] == 200
        port = ragpulse.metrics_port
        wait_for(
            lambda: scrape(port).value("ragpulse_evaluations_total", metric="conversation_completeness") >= 1,
            90,
            "the conversation judged once quiet",
        )
        metrics = scrape(port)
    assert metrics.value("ragpulse_evaluations_total", metric="faithfulness") == 3  # each turn as a record
    assert (
        metrics.value("ragpulse_evaluations_total", metric="knowledge_retention") == 1
    )  # once per conversation
    assert metrics.mean_score("knowledge_retention") == pytest.approx(2 / 3)
    assert metrics.mean_score("conversation_relevancy") == pytest.approx(2 / 3)
    assert metrics.mean_score("conversation_completeness") == pytest.approx(1 / 2)
