"""Conversations from real instrumentation: one user's three turns, each its own trace, in one session
set the way each instrumentation's docs set it. ragpulse must give the three records one conversation
id, gather them into one conversation in the order they were asked, and judge it as a whole.

- OpenInference (`llamaindex-conversation`): `using_session(session_id=...)` around each turn; the
  LlamaIndex instrumentation writes `session.id` on every span it makes (not on the app's root span).
- OpenLLMetry (`langchain-conversation`): the session in LangChain's run metadata; the LangChain
  instrumentor writes `traceloop.association.properties.session_id` on every LangChain span (not on
  the OpenAI instrumentor's embeddings span).
- The official GenAI stack (`openai-conversation`, opentelemetry-instrumentation-openai-v2 2.4b0
  with the latest experimental conventions): openai-v2 has no way to set `gen_ai.conversation.id` on
  its chat spans; the app opens each turn as an agent invocation with OpenTelemetry's GenAI utility
  (opentelemetry-util-genai, which openai-v2 records through), which writes the id on that
  `invoke_agent` span only.

The committed captures (tests/data/instrumentation/<combination>, refreshed with
`python -m tests.instrumentation.capture <combination>`) are read without the venv; the live test runs
each app in the instrumentation venv against `ragpulse run` and reads the conversation's scores from
/metrics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collector.assembly.conversations import ConversationConfig, ConversationTracker
from collector.records import RagRecord
from collector.sampling.sampler import Sampler, SamplingConfig
from evaluators import OpenAIJudge, a_evaluate
from evaluators.judges.prompts import parse_fenced
from evaluators.metrics.conversation import (
    KNOWLEDGE_RETENTION_INSTRUCTION,
    RELEVANCY_INSTRUCTION,
    ConversationRelevancy,
    KnowledgeRetention,
)
from testkit.collector_runner import wait_for
from testkit.openai_server import JudgeScript, ScriptedOpenAIServer
from testkit.process import RagpulseProcess
from testkit.scrape import scrape
from tests.instrumentation.apps import corpus
from tests.instrumentation.capture import CONVERSATION_COMBINATIONS, FIXTURES, combination_name
from tests.instrumentation.llm_server import ScriptedLLMServer
from tests.instrumentation.test_conformance import exemplar_trace_id, run_app
from tests.instrumentation.test_images import records_of

COMBOS = [combination_name(*c) for c in CONVERSATION_COMBINATIONS]
METRICS = ["knowledge_retention", "conversation_relevancy"]
# Where each real instrumentation writes the session: (attribute, the scope of the spans that carry it,
# their name's start). Every such span of a turn's trace carries it; no other span (the app's root span,
# OpenLLMetry's OpenAI embeddings span, the GenAI chat span) and no resource does.
SESSION_SPANS = {
    "llamaindex-conversation-openinference": ("session.id", "openinference.instrumentation.llama_index", ""),
    "langchain-conversation-openllmetry": (
        "traceloop.association.properties.session_id",
        "opentelemetry.instrumentation.langchain",
        "",
    ),
    "openai-conversation-otel-genai-span": (
        "gen_ai.conversation.id",
        "opentelemetry.util.genai.handler",
        "invoke_agent ",
    ),
}
# The third reply asks again which product and when, which the user said in turn 1: a lapse.
SCRIPT = JudgeScript(
    task_verdicts={("satisfies", "Which product", "", KNOWLEDGE_RETENTION_INSTRUCTION[:40]): "no"}
)
TRANSCRIPT = "\n".join(
    f"[{2 * n + 1}] user: {turn.text}\n[{2 * n + 2}] assistant: {turn.answer}"
    for n, turn in enumerate(corpus.CONVERSATION)
)
INSTRUCTIONS = {
    "knowledge_retention": KNOWLEDGE_RETENTION_INSTRUCTION,
    "conversation_relevancy": RELEVANCY_INSTRUCTION,
}
REPLIES = [f"[{2 * n + 2}] {turn.answer}" for n, turn in enumerate(corpus.CONVERSATION)]


def check_conversation_asked(expected: list[dict[str, Any]]) -> None:
    """The harness itself: the app asked the three turns, in order, and got their scripted answers."""
    assert [(e["question"], e["response"]) for e in expected] == [
        (turn.text, turn.answer) for turn in corpus.CONVERSATION
    ]


def turns_of(folder: Path) -> tuple[list[dict[str, Any]], list[RagRecord]]:
    """(the app's expected.json, one record per turn in the order asked)."""
    expected, records = records_of(folder)
    check_conversation_asked(expected)
    return expected, [records[e["trace_id"]] for e in expected]


def check_turns_read(folder: Path) -> None:
    expected, turns = turns_of(folder)
    assert [(t.query, t.response) for t in turns] == [(e["question"], e["response"]) for e in expected]
    assert [[n.text for n in t.nodes] for t in turns] == [
        [p["text"] for p in e["passages"]] for e in expected
    ]
    assert {t.conversation_id for t in turns} == {corpus.CONVERSATION_SESSION}
    assert len({t.trace_id for t in turns}) == 3, "each turn is its own trace"
    ends = [t.end_time_unix_nano for t in turns]
    assert ends == sorted(ends) and len(set(ends)) == 3, "the turns end in the order they were asked"


@pytest.mark.parametrize("combo", COMBOS)
def test_the_committed_capture_gives_three_turns_of_one_conversation(combo: str) -> None:
    check_turns_read(FIXTURES / combo)


@pytest.mark.parametrize("combo", COMBOS)
def test_the_real_spans_carry_the_session_as_documented(combo: str) -> None:
    attribute, scope, name = SESSION_SPANS[combo]
    turns = {e["trace_id"] for e in json.loads((FIXTURES / combo / "expected.json").read_text())}
    traces = json.loads((FIXTURES / combo / "traces.json").read_text())
    carriers, others = set(), set()  # the session values on the spans that should carry it, the rest
    for resource in traces["resourceSpans"]:
        assert attribute not in {a["key"] for a in resource["resource"]["attributes"]}
        for scope_spans in resource["scopeSpans"]:
            for span in scope_spans["spans"]:
                if span["traceId"] in turns:
                    value = {a["key"]: a["value"] for a in span.get("attributes", [])}.get(attribute)
                    carrier = scope_spans["scope"]["name"] == scope and span["name"].startswith(name)
                    (carriers if carrier else others).add(value["stringValue"] if value else None)
    assert carriers == {corpus.CONVERSATION_SESSION} and others == {None}


@pytest.mark.parametrize("combo", COMBOS)
async def test_the_pipeline_judges_the_real_turns_as_one_conversation(combo: str) -> None:
    """Through the tracker and the sampler as the pipeline runs them (the turns arriving out of order,
    as Kafka partitions deliver them), then through the OpenAI judge over HTTP."""
    expected, turns = turns_of(FIXTURES / combo)
    tracker = ConversationTracker(ConversationConfig(idle_s=10))
    for now, record in enumerate((turns[2], turns[0], turns[1])):
        assert tracker.add(record, now=now) == []
    assert tracker.quiet(now=11) == []  # the last turn arrived at 2: not quiet yet
    (conversation,) = tracker.quiet(now=12)
    assert list(conversation) == turns and len(tracker) == 0
    decision = Sampler(SamplingConfig(metrics=["faithfulness", *METRICS])).decide_conversation(conversation)
    assert decision.metrics == tuple(METRICS)
    case = decision.case
    assert case is not None and case.id == expected[-1]["trace_id"]  # scores go to the last turn's trace
    assert [(t.role, t.content) for t in case.turns or []] == [
        (role, text)
        for turn in corpus.CONVERSATION
        for role, text in (("user", turn.text), ("assistant", turn.answer))
    ]
    assert [t.retrieval_context for t in case.turns or [] if t.role == "assistant"] == [
        [p["text"] for p in e["passages"]] for e in expected
    ]
    with ScriptedOpenAIServer(SCRIPT) as server:
        judge = OpenAIJudge("scripted-judge", base_url=server.base_url, cache_size=0)
        evaluation = await a_evaluate([case], [KnowledgeRetention(), ConversationRelevancy()], judge)
        retention, relevancy = evaluation.cases[0].results
        assert retention.score == pytest.approx(2 / 3)
        assert "2 of 3 replies keep what the user said before" in retention.reason
        assert "lapses: '[6] Which product do you want to return" in retention.reason
        assert relevancy.score == 1.0
        # One call per metric, each holding the whole transcript once and the three replies as items.
        assert server.operations() == ["verdicts_satisfies"] * 2
        asked = {}
        for request in server.chat_requests:
            prompt = "\n".join(str(m["content"]) for m in request.body["messages"])
            (metric,) = [name for name, text in INSTRUCTIONS.items() if text[:40] in prompt]
            asked[metric] = parse_fenced(request.body["messages"][-1]["content"])
        assert sorted(asked) == sorted(INSTRUCTIONS)
        for fenced in asked.values():
            assert (fenced["REFERENCES"], fenced["ITEMS"]) == ([TRANSCRIPT], REPLIES)


@pytest.mark.instrumentation
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("app", "instrumentation"), CONVERSATION_COMBINATIONS, ids=COMBOS)
def test_ragpulse_run_judges_the_live_conversation(
    instrumentation_venv: str,
    llm_server: ScriptedLLMServer,
    app: str,
    instrumentation: str,
    tmp_path: Path,
) -> None:
    """The app exports its three turns to `ragpulse run`; once the session goes quiet (idle_s: 2) the
    conversation is judged once, its scores on the last turn's trace."""
    config = tmp_path / "ragpulse.yaml"
    config.write_text(f"sampling:\n  metrics: {json.dumps(METRICS)}\n  conversations: {{idle_s: 2.0}}\n")
    with (
        ScriptedOpenAIServer(SCRIPT) as judge,
        RagpulseProcess(
            "--config", str(config), "--quiet-period", "0.5", "--judge-base-url", judge.base_url
        ) as ragpulse,
    ):
        endpoint = ("--endpoint", f"http://127.0.0.1:{ragpulse.otlp_port}")
        expected = run_app(
            instrumentation_venv, app, instrumentation, llm_server, tmp_path / "expected.json", *endpoint,
            check=check_conversation_asked,
        )  # fmt: skip
        port = ragpulse.metrics_port
        wait_for(
            lambda: all(scrape(port).value("ragpulse_evaluations_total", metric=m) >= 1 for m in METRICS),
            120,
            "the quiet conversation judged",
        )
        metrics = scrape(port)
        requests = list(judge.chat_requests)
    service = combination_name(app, instrumentation)
    for metric in METRICS:  # once per conversation, reported on its last turn's trace
        assert metrics.value("ragpulse_evaluations_total", metric=metric, service=service) == 1
        last = exemplar_trace_id(metrics, "ragpulse_evaluations_total", metric=metric, service=service)
        assert last == expected[-1]["trace_id"]
    assert metrics.mean_score("knowledge_retention", service=service) == pytest.approx(2 / 3)
    assert metrics.mean_score("conversation_relevancy", service=service) == 1.0
    assert [parse_fenced(r.body["messages"][-1]["content"])["REFERENCES"] for r in requests] == [
        [TRANSCRIPT]
    ] * 2
