"""Which generation consumed which passages: agentic traces, refine mode, context in the prompt, logs.

The single-convention shapes are proven on real instrumentation (tests/instrumentation and the
captured traces in tests/data/instrumentation); these tests pin the pairing rules on traces built
with the real OTel SDK in the OpenInference and GenAI vocabularies.
"""

from __future__ import annotations

import json

from opentelemetry.trace import Tracer

from collector.assemble import TraceAssembler
from collector.conventions import extract
from collector.conventions.generations import Message
from collector.conventions.prompt_context import PromptContextConfig, context_from_prompt, split_passages
from collector.decode import decode
from collector.offsets import NoAck
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
