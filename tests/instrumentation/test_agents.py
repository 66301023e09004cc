"""Agents that retrieve through a tool call, DSPy's templated prompts, and LLM calls through LiteLLM
and OpenLIT, read exactly (issue 46).

Each is a real app (apps/pydantic_ai_agent.py, langgraph_agent.py, llamaindex_agent.py, dspy_rag.py)
asking the suite's two questions; the scripted LLM answers an agent's first call with a call of its
retrieval tool and the next one from the corpus. Per question ragpulse must make exactly one record:
the user's question (not the tool's `{"query": ...}` arguments), the passages the tool returned (or,
where the tool ran a retriever, the retriever's), the final answer (not DSPy's `[[ ## answer ## ]]`
template), anchored on the generation that consumed them; the planted answer is the one that fails.
LiteLLM (OpenInference, and its `otel` callback writing onto the app's request span) and OpenLIT
(which writes the prompt on the span, as system instructions and in a log event, and logs a streamed
call's event on the parent span): one record per generation, the passages once.
Offline on the committed captures, and live through `ragpulse run` (`-m instrumentation`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai import OpenAI

from collector.conventions import extract
from testkit.captured import captured_traces
from tests.instrumentation.apps import corpus
from tests.instrumentation.capture import (
    AGENT_COMBINATIONS,
    FIXTURES,
    SDK_COMBINATIONS,
    combination_name,
    venv_of,
)
from tests.instrumentation.llm_server import ScriptedLLMServer
from tests.instrumentation.test_captured import check_extracted_exactly
from tests.instrumentation.test_conformance import check_combination, check_committed_capture

COMBINATIONS = AGENT_COMBINATIONS + SDK_COMBINATIONS
COMBOS = [combination_name(*c) for c in COMBINATIONS]
LOGGING = {"openai-openlit", "openai-stream-openlit"}  # OpenLIT logs the content as well
_VENV_FIXTURES = {"": "instrumentation_venv", "agents": "agents_venv", "openlit": "openlit_venv"}


@pytest.mark.parametrize("combo", COMBOS)
def test_captured_agent_trace_is_extracted_exactly(combo: str) -> None:
    check_extracted_exactly(FIXTURES / combo, combo)


@pytest.mark.parametrize("combo", COMBOS)
def test_committed_agent_fixture_is_consistent(combo: str) -> None:
    assert bool(check_committed_capture(FIXTURES / combo)) == (combo in LOGGING)


def test_the_record_is_anchored_on_the_final_answer_not_inside_the_tool() -> None:
    """LlamaIndex's QueryEngineTool answers inside the tool (its own LLM call over the retrieved
    passages); the agent's answer is the LLM call after the tool, and the record is anchored there."""
    folder = FIXTURES / "llamaindex-agent-openinference"
    expected = {e["trace_id"] for e in json.loads((folder / "expected.json").read_text())}
    for trace in (t for t in captured_traces(folder) if t.trace_id in expected):
        (record,) = extract(trace.trace_id, trace.spans)
        by_id = {s.span_id: s for s in trace.spans}
        tools = {s.span_id for s in trace.spans if s.attributes.get("openinference.span.kind") == "TOOL"}
        anchor, chain = by_id[record.anchor_span_id], []
        while anchor.parent_span_id:
            chain.append(anchor.parent_span_id)
            anchor = by_id[anchor.parent_span_id]
        assert not tools & set(chain), "the record is anchored inside the tool call"
        assert (
            max(s.end_ns for s in trace.spans if s.span_id in tools) <= by_id[record.anchor_span_id].start_ns
        )


def test_the_scripted_llm_calls_the_tool_then_answers(llm_server: ScriptedLLMServer) -> None:
    """The harness itself: a request offering tools gets a call of the first one, the question as its
    first argument; with the tool's result in the messages, the scripted answer."""
    client = OpenAI(base_url=llm_server.base_url, api_key="sk-scripted")
    question = corpus.QUESTIONS[0]
    tool = {
        "type": "function",
        "function": {
            "name": "search_handbook",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
    messages: list = [{"role": "user", "content": question.text}]
    first = client.chat.completions.create(model=corpus.MODEL, messages=messages, tools=[tool])
    (call,) = first.choices[0].message.tool_calls or []
    assert call.function.name == "search_handbook"
    assert json.loads(call.function.arguments) == {"query": question.text}
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": corpus.PASSAGES[1].text},
    ]
    second = client.chat.completions.create(model=corpus.MODEL, messages=messages, tools=[tool])
    assert second.choices[0].message.content == question.answer and not second.choices[0].message.tool_calls


@pytest.mark.instrumentation
@pytest.mark.parametrize(("app", "instrumentation"), COMBINATIONS, ids=COMBOS)
def test_agent_conformance(
    request: pytest.FixtureRequest,
    llm_server: ScriptedLLMServer,
    app: str,
    instrumentation: str,
    tmp_path: Path,
) -> None:
    python = request.getfixturevalue(_VENV_FIXTURES[venv_of(app, instrumentation)])
    check_combination(python, llm_server, app, instrumentation, tmp_path)
