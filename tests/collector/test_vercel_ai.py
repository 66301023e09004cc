"""The Vercel AI SDK's `ai.*` spans (collector/conventions/vercel_ai.py), made with the real OTel SDK in
the shapes the real SDK writes (tests/data/instrumentation/vercel-ai-*: the captures of the real one)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from opentelemetry.trace import Tracer

from collector.conventions import explain, extract
from collector.conventions.vercel_ai import prompt_messages
from collector.receivers.decode import decode
from collector.spans import flatten
from testkit.rag_traces import Collect, encode, provider

QUESTION = "How many days do customers have to request a full refund?"
ANSWER = "Customers can request a full refund within 45 days of purchase."
REFUNDS = "Customers can request a full refund within 45 days of purchase."
LEAVE = "Full-time staff receive 27 days of paid leave per year."
SYSTEM = "You answer questions about the handbook. Answer only from these passages."


class Trace:
    """One `POST /ask` trace written as the AI SDK writes it: an outer call, its steps, its tool calls."""

    def __init__(self) -> None:
        self.collect = Collect()
        self.tracer: Tracer = provider(self.collect).get_tracer("ai")

    @contextmanager
    def call(self, operation: str = "ai.generateText", **prompt: Any) -> Iterator[None]:
        with (
            self.tracer.start_as_current_span("POST /ask", attributes={"http.route": "/ask"}),
            self.tracer.start_as_current_span(operation) as span,
        ):
            span.set_attributes({"ai.operationId": operation, "ai.prompt": json.dumps(prompt)})
            yield
            span.set_attribute("ai.response.text", self.last_text)

    def step(self, messages: list[dict[str, Any]], text: str, operation: str = "ai.generateText") -> None:
        suffix = "doStream" if operation == "ai.streamText" else "doGenerate"
        with self.tracer.start_as_current_span(f"{operation}.{suffix}") as span:
            span.set_attributes(
                {
                    "ai.operationId": f"{operation}.{suffix}",
                    "ai.prompt.messages": json.dumps(messages),
                    "ai.response.text": text,
                    "ai.model.id": "gpt-4o-mini",
                    "gen_ai.system": "openai.chat",
                    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                }
            )
        self.last_text = text

    def tool(self, name: str, args: dict[str, Any], result: Any) -> None:
        with self.tracer.start_as_current_span("ai.toolCall") as span:
            span.set_attributes(
                {
                    "ai.operationId": "ai.toolCall",
                    "ai.toolCall.name": name,
                    "ai.toolCall.args": json.dumps(args),
                    "ai.toolCall.result": json.dumps(result),
                }
            )

    def records(self) -> list:
        spans = flatten(decode(encode(self.collect.spans)))
        return extract(spans[0].trace_id, spans)

    def span_id(self, name: str, nth: int = 0) -> str:
        return f"{[s for s in self.collect.spans if s.name == name][nth].context.span_id:016x}"


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _tool_messages(call_id: str, result: Any) -> list[dict[str, Any]]:
    call = {"type": "tool-call", "toolCallId": call_id, "toolName": "search", "input": {"query": QUESTION}}
    output = {"type": "json", "value": result}
    done = {"type": "tool-result", "toolCallId": call_id, "toolName": "search", "output": output}
    return [{"role": "assistant", "content": [call]}, {"role": "tool", "content": [done]}]


def test_tool_result_documents_are_the_passages_of_the_step_that_read_them() -> None:
    trace, documents = Trace(), [{"id": "refunds", "text": REFUNDS}, {"id": "leave", "text": LEAVE}]
    with trace.call(system=SYSTEM, messages=[{"role": "user", "content": QUESTION}]):
        first = [{"role": "system", "content": SYSTEM}, _user(QUESTION)]
        trace.step(first, "")
        trace.tool("search", {"query": QUESTION}, documents)
        trace.step(first + _tool_messages("call_1", documents), ANSWER)
    [record] = trace.records()
    assert (record.query, record.response, record.convention) == (QUESTION, ANSWER, "vercel_ai")
    assert [(n.id, n.text) for n in record.nodes] == [("refunds", REFUNDS), ("leave", LEAVE)]
    assert record.anchor_span_id == trace.span_id("ai.generateText.doGenerate", 1)  # not the outer span
    assert (record.model, record.route) == ("gpt-4o-mini-2024-07-18", "/ask")


def test_without_a_tool_the_passages_are_read_from_the_system_prompt() -> None:
    trace = Trace()
    with trace.call(system=f"{SYSTEM}\n\n{REFUNDS}\n\n{LEAVE}", prompt=QUESTION):
        trace.step(
            [{"role": "system", "content": f"{SYSTEM}\n\n{REFUNDS}\n\n{LEAVE}"}, _user(QUESTION)], ANSWER
        )
    [record] = trace.records()
    assert (record.query, record.response) == (QUESTION, ANSWER)
    assert [n.text for n in record.nodes] == [REFUNDS, LEAVE]


def test_stream_text_is_read_like_generate_text() -> None:
    trace = Trace()
    with trace.call("ai.streamText", prompt=QUESTION):
        trace.step([_user(QUESTION)], "", operation="ai.streamText")
        trace.tool("search", {"query": QUESTION}, [REFUNDS])
        trace.step([_user(QUESTION)], ANSWER, operation="ai.streamText")
    [record] = trace.records()
    assert (record.query, record.response, [n.text for n in record.nodes]) == (QUESTION, ANSWER, [REFUNDS])
    assert record.anchor_span_id == trace.span_id("ai.streamText.doStream", 1)


def test_an_agent_that_searches_twice_before_answering_gives_one_record_with_both_results() -> None:
    trace = Trace()
    with trace.call(prompt=QUESTION):
        trace.step([_user(QUESTION)], "")
        trace.tool("search", {"query": "refund window"}, [REFUNDS])
        trace.step([_user(QUESTION)], "")
        trace.tool("search", {"query": "leave"}, {"documents": [{"content": LEAVE, "score": 0.5}]})
        trace.step([_user(QUESTION)], ANSWER)
    [record] = trace.records()
    assert [(n.text, n.score) for n in record.nodes] == [(REFUNDS, None), (LEAVE, 0.5)]


def test_a_trace_of_embeddings_only_gives_no_record_and_says_why() -> None:
    trace = Trace()
    with trace.tracer.start_as_current_span("ai.embedMany") as span:
        span.set_attributes({"ai.operationId": "ai.embedMany", "ai.values": [json.dumps(REFUNDS)]})
    spans = flatten(decode(encode(trace.collect.spans)))
    assert extract(spans[0].trace_id, spans) == []
    assert any(note.startswith("vercel_ai: looks for ai.operationId") for note in explain(spans))


@pytest.mark.parametrize(
    ("result", "texts", "ids"),
    [
        ([REFUNDS, LEAVE], [REFUNDS, LEAVE], ["0", "1"]),
        ([{"content": REFUNDS, "id": "a"}, {"text": LEAVE, "id": "b"}], [REFUNDS, LEAVE], ["a", "b"]),
        ({"results": [{"text": REFUNDS, "id": "kb-1"}]}, [REFUNDS], ["kb-1"]),
        (f"[kb-3] {REFUNDS}\n[kb-7] {LEAVE}", [REFUNDS, LEAVE], ["kb-3", "kb-7"]),
        (f"{REFUNDS}\n\n{LEAVE}", [REFUNDS, LEAVE], ["0", "1"]),
    ],
)
def test_a_tool_result_is_split_into_passages(result: Any, texts: list[str], ids: list[str]) -> None:
    trace = Trace()
    with trace.call(prompt=QUESTION):
        trace.step([_user(QUESTION)], "")
        trace.tool("search", {"query": "refunds"}, result)
        trace.step([_user(QUESTION)], ANSWER)
    [record] = trace.records()
    assert ([n.text for n in record.nodes], [n.id for n in record.nodes]) == (texts, ids)
    assert record.query == QUESTION  # the user's question, not the tool's search


def test_tool_results_in_the_prompt_count_when_the_client_ran_the_tool() -> None:
    """A tool without `execute` runs in the browser: no ai.toolCall span, its result only in the
    next request's messages."""
    trace, documents = Trace(), [{"id": "refunds", "text": REFUNDS}]
    with trace.call(prompt=QUESTION):
        trace.step([_user(QUESTION)], "")
        trace.step([_user(QUESTION), *_tool_messages("call_1", documents)], ANSWER)
    [record] = trace.records()
    assert [(n.id, n.text) for n in record.nodes] == [("refunds", REFUNDS)]
    assert record.anchor_span_id == trace.span_id("ai.generateText.doGenerate", 1)


@pytest.mark.parametrize(
    ("prompt", "roles"),
    [
        ({"system": SYSTEM, "prompt": QUESTION}, ["system", "user"]),
        ({"messages": [{"role": "user", "content": QUESTION}]}, ["user"]),
        ({"prompt": [{"role": "user", "content": [{"type": "text", "text": QUESTION}]}]}, ["user"]),
        ([{"role": "system", "content": SYSTEM}, _user(QUESTION)], ["system", "user"]),
        ("not json", []),
        (42, []),
    ],
)
def test_prompt_messages_reads_every_prompt_shape(prompt: Any, roles: list[str]) -> None:
    messages = prompt_messages(json.dumps(prompt) if not isinstance(prompt, str) else prompt)
    assert [m.role for m in messages] == roles
    assert all(m.text == QUESTION for m in messages if m.role == "user")


def test_attributes_of_the_wrong_type_are_no_record_not_an_error() -> None:
    trace = Trace()
    with trace.tracer.start_as_current_span("ai.generateText.doGenerate") as span:
        span.set_attributes(
            {"ai.operationId": "ai.generateText.doGenerate", "ai.prompt.messages": 7, "ai.response.text": 3}
        )
    assert trace.records() == []
