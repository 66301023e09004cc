"""Which generation consumed which passages: agentic traces, refine mode, context in the prompt, logs.

The single-convention shapes are proven on real instrumentation (tests/instrumentation and the
captured traces in tests/data/instrumentation); these tests pin the pairing rules on traces built
with the real OTel SDK in the OpenInference and GenAI vocabularies.
"""

from __future__ import annotations

import json

from opentelemetry.trace import Tracer

from collector.assembly.assembler import TraceAssembler
from collector.conventions import extract
from collector.conventions.generations import Message
from collector.conventions.prompt_context import PromptContextConfig, context_from_prompt, split_passages
from collector.pipeline.offsets import NoAck
from collector.receivers.decode import decode
from collector.spans import Event, LogEvent, flatten
from testkit.rag_traces import Collect, encode, provider


def _records(collect: Collect, logs: list[LogEvent] | None = None):
    spans = flatten(decode(encode(collect.spans)))
    assembler = TraceAssembler()
    assembler.add(spans, NoAck(), 0.0, logs or [])
    return [record for trace in assembler.drain() for record in extract(trace.trace_id, trace.spans)]


def _retriever(tracer: Tracer, query: str, docs: list[tuple[str, str]]) -> None:
    with tracer.start_as_current_span("retrieve") as span:
        span.set_attributes({"openinference.span.kind": "RETRIEVER", "input.value": query})
        for i, (doc_id, text) in enumerate(docs):
            span.set_attribute(f"retrieval.documents.{i}.document.id", doc_id)
            span.set_attribute(f"retrieval.documents.{i}.document.content", text)


def _llm(tracer: Tracer, prompt: str, output: str) -> str:
    with tracer.start_as_current_span("llm") as span:
        span.set_attributes(
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": prompt,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": output,
            }
        )
        return format(span.get_span_context().span_id, "016x")


def test_agentic_trace_gives_one_record_per_generation_that_consumed_context() -> None:
    collect = Collect()
    tracer = provider(collect).get_tracer("openinference.instrumentation.langchain")
    with tracer.start_as_current_span("agent") as agent:
        agent.set_attributes(
            {
                "openinference.span.kind": "AGENT",
                "input.value": "Compare the refund windows of plans A and B.",
                "session.id": "conv-42",
            }
        )
        _llm(tracer, "Decide which tool to call.", "call search(plan A)")  # routing: consumed nothing
        _retriever(tracer, "plan A refunds", [("a1", "Plan A refunds within 30 days.")])
        first = _llm(tracer, "Plan A refunds within 30 days. What about A?", "Plan A: 30 days.")
        _retriever(tracer, "plan B refunds", [("b1", "Plan B refunds within 14 days.")])
        second = _llm(tracer, "Plan B refunds within 14 days. Compare.", "A gives 30 days, B 14.")
    records = _records(collect)
    assert [(r.anchor_span_id, r.response, [n.id for n in r.nodes]) for r in records] == [
        (first, "Plan A: 30 days.", ["a1"]),
        (second, "A gives 30 days, B 14.", ["b1"]),
    ]
    assert {r.query for r in records} == {"Compare the refund windows of plans A and B."}
    assert {r.conversation_id for r in records} == {"conv-42"}


def test_a_later_generation_repeating_earlier_passages_consumed_them() -> None:
    """LlamaIndex's refine mode: one retrieval, two LLM calls over the same passages."""
    collect = Collect()
    tracer = provider(collect).get_tracer("openinference.instrumentation.llama_index")
    with tracer.start_as_current_span("query") as chain:
        chain.set_attributes({"openinference.span.kind": "CHAIN", "input.value": "How long are refunds?"})
        _retriever(tracer, "How long are refunds?", [("d1", "Refunds take 14 days.")])
        _llm(tracer, "Context: Refunds take 14 days. Q: How long?", "14 days.")
        _llm(tracer, "Refine: Refunds take 14 days. Existing answer: 14 days.", "Refunds take 14 days.")
        _llm(tracer, "Summarise our chat so far.", "We talked about refunds.")  # no passage: no record
    records = _records(collect)
    assert [(r.response, [n.id for n in r.nodes]) for r in records] == [
        ("14 days.", ["d1"]),
        ("Refunds take 14 days.", ["d1"]),
    ]


def test_context_in_the_system_message_without_a_retriever_span() -> None:
    messages = [
        Message(
            "system",
            "Answer using only the context below.\n\n[kb-1] Office hours are 9 to 5.\n\n"
            "[kb-2] Refunds take 14 days.",
        ),
        Message("user", "When are office hours?"),
    ]
    question, nodes = context_from_prompt(messages, None, PromptContextConfig())
    assert question == "When are office hours?"
    assert [(n.id, n.text) for n in nodes] == [
        ("kb-1", "Office hours are 9 to 5."),
        ("kb-2", "Refunds take 14 days."),
    ]


def test_context_and_question_in_one_user_message_and_metadata_headers_dropped() -> None:
    prompt = (
        "Context information is below.\n---------------------\nfile_path: handbook/hours.md\n\n"
        "Office hours are 9 to 5 on weekdays.\n\nfile_path: handbook/refunds.md\n\nRefunds take 14 days.\n"
        "---------------------\nGiven the context information and not prior knowledge, answer the query.\n"
        "Query: When are office hours?\nAnswer: "
    )
    question, nodes = context_from_prompt([Message("user", prompt)], None, PromptContextConfig())
    assert question == "When are office hours?"
    assert [n.text for n in nodes] == ["Office hours are 9 to 5 on weekdays.", "Refunds take 14 days."]


def test_a_plain_chat_without_context_is_not_a_rag_record() -> None:
    messages = [Message("system", "You are a helpful assistant."), Message("user", "Tell me a joke.")]
    assert context_from_prompt(messages, None, PromptContextConfig()) is None
    assert context_from_prompt(messages, None, PromptContextConfig(enabled=False)) is None


def test_passages_keep_key_value_sentences_that_are_content() -> None:
    passages = split_passages(
        "Office hours: Monday to Friday, 9 to 5.\n\nRefund window: 14 days.", PromptContextConfig()
    )
    assert [text for _, text in passages] == [
        "Office hours: Monday to Friday, 9 to 5.",
        "Refund window: 14 days.",
    ]


def test_genai_content_in_log_events_joined_to_the_span() -> None:
    """The official openai-v2 instrumentation's legacy mode: content only in log records."""
    collect = Collect()
    tracer = provider(collect).get_tracer("opentelemetry.instrumentation.openai_v2")
    with tracer.start_as_current_span("chat gpt-4o-mini") as span:
        span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"})
        context = span.get_span_context()
    trace_id, span_id = format(context.trace_id, "032x"), format(context.span_id, "016x")
    system = "Use the context.\n\n[kb-1] Office hours are 9 to 5 on weekdays."
    logs = [
        LogEvent(
            trace_id,
            span_id,
            Event("gen_ai.system.message", {"gen_ai.system": "openai"}, {"content": system}),
        ),
        LogEvent(trace_id, span_id, Event("gen_ai.user.message", {}, {"content": "When are office hours?"})),
        LogEvent(
            trace_id,
            span_id,
            Event("gen_ai.choice", {}, {"index": 0, "message": {"role": "assistant", "content": "9 to 5."}}),
        ),
        LogEvent("f" * 32, span_id, Event("gen_ai.user.message", {}, {"content": "another trace"})),
    ]
    (record,) = _records(collect, logs)
    assert (record.query, record.response, record.anchor_span_id) == (
        "When are office hours?",
        "9 to 5.",
        span_id,
    )
    assert [(n.id, n.text) for n in record.nodes] == [("kb-1", "Office hours are 9 to 5 on weekdays.")]
    assert record.model == "gpt-4o-mini" and record.convention == "gen_ai"


def test_genai_semconv_documents_with_ids_and_scores_only() -> None:
    collect = Collect()
    tracer = provider(collect).get_tracer("app")
    with tracer.start_as_current_span("POST /ask"):
        with tracer.start_as_current_span("retrieval") as retrieval:
            retrieval.set_attributes(
                {
                    "gen_ai.operation.name": "retrieval",
                    "gen_ai.retrieval.query.text": "When are office hours?",
                    "gen_ai.retrieval.documents": json.dumps([{"id": "kb-1", "score": 0.8}]),
                }
            )
        with tracer.start_as_current_span("chat") as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": "9 to 5."}]}]
                    ),
                }
            )
    (record,) = _records(collect)
    assert [(n.id, n.text, n.score) for n in record.nodes] == [("kb-1", "", 0.8)]


def test_every_generation_of_an_agentic_trace_is_scored_not_taken_for_a_duplicate() -> None:
    """Duplicates are suppressed per generation (trace, anchor span, metric), not per trace."""
    from collector.metrics import DROPPED, EVALUATIONS
    from testkit.collector_runner import RunningCollector, wait_for
    from testkit.otlp import post_traces

    collect = Collect()
    tracer = provider(collect, service="agentic-app").get_tracer("openinference.instrumentation.langchain")
    with tracer.start_as_current_span("agent") as agent:
        agent.set_attributes(
            {"openinference.span.kind": "AGENT", "input.value": "Refunds for plans A and B?"}
        )
        _retriever(tracer, "plan A", [("a1", "Plan A refunds within 30 days.")])
        _llm(tracer, "Plan A refunds within 30 days.", "Plan A refunds within 30 days.")
        _retriever(tracer, "plan B", [("b1", "Plan B refunds within 14 days.")])
        _llm(tracer, "Plan B refunds within 14 days.", "Plan B refunds within 14 days.")

    def scored() -> float:
        return sum(
            EVALUATIONS.labels("faithfulness", "agentic-app", "unknown", "unknown", outcome)._value.get()
            for outcome in ("passed", "failed", "error", "unmeasured")
        )

    before, duplicates = scored(), DROPPED.labels("duplicate")._value.get()
    # One worker: the two records are evaluated one after the other, the second after the first's keys
    # were recorded (with several workers a per-trace key could slip through by racing).
    with RunningCollector(evaluate=True, **{"evaluation.workers": 1}) as collector:
        assert post_traces(collector.service.receiver.port, encode(collect.spans))[0] == 200
        wait_for(lambda: scored() - before == 2, 60, "both generations scored")
    assert DROPPED.labels("duplicate")._value.get() == duplicates


def _user_and_tool_call(question: str) -> list[dict]:
    return [
        {"role": "user", "parts": [{"type": "text", "content": question}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "search"}]},
    ]


def _genai_chat(tracer: Tracer, inputs: list[dict], output_parts: list[dict]) -> str:
    with tracer.start_as_current_span("chat gpt-4o-mini") as span:
        span.set_attributes(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.input.messages": json.dumps(inputs),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": output_parts}]),
            }
        )
        return format(span.get_span_context().span_id, "016x")


def test_a_genai_execute_tool_result_is_the_retrieval_of_the_answer_after_it() -> None:
    """Pydantic AI's shape: chat (a tool call), execute_tool (the documents), chat (the answer); the
    question is the user's message, not the tool's arguments, and the passages are read once."""
    collect = Collect()
    tracer = provider(collect).get_tracer("pydantic-ai")
    question = "When are office hours?"
    documents = [
        {"id": "kb-1", "text": "Office hours are 9 to 5."},
        {"id": "kb-2", "text": "Refunds: 14 days."},
    ]
    with tracer.start_as_current_span("invoke_agent agent"):
        _genai_chat(tracer, _user_and_tool_call(question)[:1], [{"type": "tool_call", "id": "c1"}])
        with tracer.start_as_current_span("execute_tool search") as tool:
            tool.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search",
                    "gen_ai.tool.call.arguments": json.dumps({"query": "office hours"}),
                    "gen_ai.tool.call.result": json.dumps(documents),
                }
            )
        response = {"type": "tool_call_response", "id": "c1", "result": documents}
        inputs = [*_user_and_tool_call(question), {"role": "user", "parts": [response]}]
        answer = _genai_chat(tracer, inputs, [{"type": "text", "content": "9 to 5."}])
    (record,) = _records(collect)
    assert (record.query, record.response, record.anchor_span_id) == (question, "9 to 5.", answer)
    assert [(n.id, n.text) for n in record.nodes] == [(d["id"], d["text"]) for d in documents]


def test_tool_results_in_the_prompt_are_the_passages_when_no_tool_span_is_traced() -> None:
    """Only the LLM is instrumented: the tool results of this turn (after the user's last message)
    are its passages; an earlier turn's are not."""
    collect = Collect()
    tracer = provider(collect).get_tracer("opentelemetry.instrumentation.openai_v2")
    old = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c0", "response": "Old result."}]}
    result = {
        "type": "tool_call_response",
        "id": "c1",
        "response": "Office hours are 9 to 5.\n\nRefunds: 14 days.",
    }
    inputs = [old, *_user_and_tool_call("When are office hours?"), {"role": "tool", "parts": [result]}]
    _genai_chat(tracer, inputs, [{"type": "text", "content": "9 to 5."}])
    (record,) = _records(collect)
    assert record.query == "When are office hours?"
    assert [(n.id, n.text) for n in record.nodes] == [
        ("0", "Office hours are 9 to 5."),
        ("1", "Refunds: 14 days."),
    ]


def test_a_tool_that_ran_a_retriever_counts_by_its_passages_and_its_inner_llm_gives_no_record() -> None:
    """LlamaIndex's QueryEngineTool: the tool's own LLM call answers from the retriever's passages;
    the agent's answer after the tool is the record, with the retriever's passages (not the tool's
    synthesised output) and the agent's question (not the tool's `{'input': ...}`)."""
    collect = Collect()
    tracer = provider(collect).get_tracer("openinference.instrumentation.llama_index")
    with tracer.start_as_current_span("FunctionAgent.run") as agent:
        agent.set_attributes({"openinference.span.kind": "AGENT", "input.value": "When are office hours?"})
        _llm(tracer, "When are office hours?", "")  # the tool call: no text
        with tracer.start_as_current_span("QueryEngineTool.call") as tool:
            tool.set_attributes(
                {
                    "openinference.span.kind": "TOOL",
                    "input.value": "{'input': 'office hours'}",
                    "output.value": "Office hours are 9 to 5.",
                }
            )
            _retriever(tracer, "office hours", [("kb-1", "Office hours are 9 to 5 on weekdays.")])
            _llm(tracer, "Office hours are 9 to 5 on weekdays. Q: office hours", "Office hours are 9 to 5.")
        final = _llm(tracer, "Tool said: Office hours are 9 to 5.", "9 to 5 on weekdays.")
    (record,) = _records(collect)
    assert (record.query, record.response, record.anchor_span_id) == (
        "When are office hours?",
        "9 to 5 on weekdays.",
        final,
    )
    assert [(n.id, n.text) for n in record.nodes] == [("kb-1", "Office hours are 9 to 5 on weekdays.")]


def test_an_openllmetry_tool_span_is_a_retrieval_and_its_arguments_are_not_the_question() -> None:
    collect = Collect()
    tracer = provider(collect).get_tracer("opentelemetry.instrumentation.langchain")
    with tracer.start_as_current_span("POST /ask"):
        with tracer.start_as_current_span("search.tool") as tool:
            tool.set_attributes(
                {
                    "traceloop.span.kind": "tool",
                    "traceloop.entity.name": "search",
                    "traceloop.entity.input": json.dumps({"inputs": {"query": "hours"}}),
                    "traceloop.entity.output": json.dumps(
                        {
                            "output": {
                                "type": "tool",
                                "data": {"content": "[1] Hours are 9 to 5.\n[2] Refunds: 14 days."},
                            }
                        }
                    ),
                }
            )
        with tracer.start_as_current_span("openai.chat") as chat:
            chat.set_attributes(
                {
                    "llm.request.type": "chat",
                    "gen_ai.prompt.0.role": "user",
                    "gen_ai.prompt.0.content": "When are office hours?",
                    "gen_ai.completion.0.role": "assistant",
                    "gen_ai.completion.0.content": "9 to 5.",
                }
            )
    (record,) = _records(collect)
    assert (record.query, record.response) == ("When are office hours?", "9 to 5.")
    assert [(n.id, n.text) for n in record.nodes] == [("1", "Hours are 9 to 5."), ("2", "Refunds: 14 days.")]


def test_a_dspy_prompt_is_read_by_its_fields() -> None:
    """DSPy's ChatAdapter: the system message is the template, the user message the fields; the
    answer is the answer field, without the reasoning or the completed marker."""
    system = (
        "Your input fields are:\n1. `context`\n\n[[ ## context ## ]]\n{context}\n\n"
        "[[ ## question ## ]]\n{question}"
    )
    user = (
        "[[ ## context ## ]]\n[1] «Office hours are 9 to 5.»\n[2] «Refunds take 14 days.\nPaid by card.»\n\n"
        "[[ ## question ## ]]\nWhen are office hours?\n\nRespond with the corresponding output fields, "
        "starting with the field `[[ ## reasoning ## ]]`, then `[[ ## answer ## ]]`, and then ending with "
        "the marker for `[[ ## completed ## ]]`."
    )
    output = "[[ ## reasoning ## ]]\nIt says so.\n\n[[ ## answer ## ]]\n9 to 5.\n\n[[ ## completed ## ]]"
    collect = Collect()
    tracer = provider(collect).get_tracer("openinference.instrumentation.dspy")
    with tracer.start_as_current_span("LM.__call__") as span:
        span.set_attributes(
            {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": system,
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": user,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": output,
            }
        )
    (record,) = _records(collect)
    assert (record.query, record.response) == ("When are office hours?", "9 to 5.")
    assert [(n.id, n.text) for n in record.nodes] == [
        ("1", "Office hours are 9 to 5."),
        ("2", "Refunds take 14 days.\nPaid by card."),
    ]


def test_prompt_headers_are_stripped_from_the_passages_they_label() -> None:
    config = PromptContextConfig()
    assert split_passages("Context:\nOffice hours are 9 to 5.\n\nRefunds take 14 days.", config) == [
        ("0", "Office hours are 9 to 5."),
        ("1", "Refunds take 14 days."),
    ]
    assert [
        t for _, t in split_passages("Documents: Office hours are 9 to 5.\n\nSources:\nRefunds.", config)
    ] == [
        "Office hours are 9 to 5.",
        "Refunds.",
    ]
    assert split_passages("Sources:\n[1] Office hours are 9 to 5.\n[2] Refunds take 14 days.", config) == [
        ("1", "Office hours are 9 to 5."),
        ("2", "Refunds take 14 days."),
    ]
    system = "Answer from the context.\n\nContext:\nOffice hours are 9 to 5.\n\nRefunds take 14 days."
    _, nodes = context_from_prompt([Message("system", system), Message("user", "Hours?")], None, config)
    assert [n.text for n in nodes] == ["Office hours are 9 to 5.", "Refunds take 14 days."]


def test_openlit_prompt_read_once_and_a_streamed_calls_event_joined_to_its_own_span() -> None:
    """OpenLIT writes the prompt on the span, as system instructions and in a details log event; a
    streamed call's event arrives with the parent's span id. One record, the passages once."""
    collect = Collect()
    tracer = provider(collect).get_tracer("openlit.instrumentation.openai")
    system = "Answer from these passages.\n\nOffice hours are 9 to 5.\n\nRefunds take 14 days."
    content = {
        "gen_ai.input.messages": json.dumps(
            [
                {"role": "system", "parts": [{"type": "text", "content": system}]},
                {"role": "user", "parts": [{"type": "text", "content": "When are office hours?"}]},
            ]
        ),
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": system}]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "9 to 5."}]}]
        ),
    }
    with tracer.start_as_current_span("POST /ask") as root:
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.response.id": "chatcmpl-1",
                    "gen_ai.request.stream": True,
                }
            )
            chat.set_attributes(content)
            chat_id = format(chat.get_span_context().span_id, "016x")
        context = root.get_span_context()
    trace_id, root_id = format(context.trace_id, "032x"), format(context.span_id, "016x")
    details = Event(
        "gen_ai.client.inference.operation.details",
        {"gen_ai.operation.name": "chat", "gen_ai.response.id": "chatcmpl-1", **content},
        None,
    )
    (record,) = _records(collect, [LogEvent(trace_id, root_id, details)])
    assert record.anchor_span_id == chat_id and record.response == "9 to 5."
    assert [n.text for n in record.nodes] == ["Office hours are 9 to 5.", "Refunds take 14 days."]


def test_a_question_written_as_call_arguments_is_their_text() -> None:
    """LlamaIndex's query engine span records its input as a Python dict repr (`{'query': '...'}`)."""
    collect = Collect()
    tracer = provider(collect).get_tracer("openinference.instrumentation.llama_index")
    with tracer.start_as_current_span("RetrieverQueryEngine.query") as chain:
        chain.set_attributes(
            {"openinference.span.kind": "CHAIN", "input.value": "{'query': 'Office hours?'}"}
        )
        _retriever(tracer, "Office hours?", [("kb-1", "Office hours are 9 to 5.")])
        _llm(tracer, "Office hours are 9 to 5. Q: Office hours?", "9 to 5.")
    (record,) = _records(collect)
    assert record.query == "Office hours?"


def test_an_agent_span_carrying_the_runs_messages_is_not_a_second_generation() -> None:
    """The Vercel AI SDK's GenAI mode writes the run's messages on `invoke_agent` and on its `chat`."""
    collect = Collect()
    tracer = provider(collect).get_tracer("gen_ai")
    system = [{"type": "text", "content": "Use these passages.\n\nOffice hours are 9 to 5."}]
    user = [{"role": "user", "parts": [{"type": "text", "content": "When are office hours?"}]}]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": "9 to 5."}]}]
    content = {
        "gen_ai.system_instructions": json.dumps(system),
        "gen_ai.input.messages": json.dumps(user),
        "gen_ai.output.messages": json.dumps(output),
    }
    with tracer.start_as_current_span("invoke_agent") as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent", **content})
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attributes({"gen_ai.operation.name": "chat", **content})
            chat_id = format(chat.get_span_context().span_id, "016x")
    (record,) = _records(collect)
    assert (record.anchor_span_id, record.response) == (chat_id, "9 to 5.")
    assert [n.text for n in record.nodes] == ["Office hours are 9 to 5."]
