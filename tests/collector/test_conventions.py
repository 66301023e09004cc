"""Every convention, from spans made with the real OTel SDK, comes out as the right RagRecord."""

from __future__ import annotations

import json

import pytest

from collector.conventions import ExtractionError, extract
from collector.receivers.decode import decode
from collector.spans import flatten
from testkit.rag_traces import BUILDERS, RagCase, encode, make_spans


def _extract(sdk_spans):
    spans = flatten(decode(encode(sdk_spans)))
    records = extract(spans[0].trace_id, spans)
    assert len(records) <= 1
    return records[0] if records else None


@pytest.mark.parametrize("convention", sorted(BUILDERS))
def test_each_convention_yields_the_rag_record(convention: str) -> None:
    case = RagCase()
    sdk_spans = make_spans(convention, case)
    record = _extract(sdk_spans)
    assert record is not None
    assert record.convention == convention
    assert record.query == case.query
    assert record.response == case.response
    assert [n.text for n in record.nodes] == [t for _, t, _ in case.nodes]
    assert [n.score for n in record.nodes] == [s for _, _, s in case.nodes]
    assert [n.id for n in record.nodes] == [i for i, _, _ in case.nodes]
    assert record.trace_id == f"{sdk_spans[0].context.trace_id:032x}"
    assert record.anchor_span_id in {f"{s.context.span_id:016x}" for s in sdk_spans}
    assert record.service == "rag-app"
    assert record.route == "/ask"
    assert record.model.startswith("gpt-4o-mini")


def test_trace_without_rag_data_is_none() -> None:
    from testkit.rag_traces import Collect, provider

    collect = Collect()
    with provider(collect).get_tracer("t").start_as_current_span("GET /health") as span:
        span.set_attribute("http.route", "/health")
    assert _extract(collect.spans) is None


def _native_span(**attributes):
    from testkit.rag_traces import Collect, provider

    collect = Collect()
    with provider(collect).get_tracer("t").start_as_current_span("answer") as span:
        span.set_attributes(attributes)
    return collect.spans


@pytest.mark.parametrize(
    ("attributes", "reason"),
    [
        (
            {"rag.query": "q", "rag.response": "a", "rag.retrieval.documents": "[{not json"},
            "invalid_retrieval_json",
        ),
        (
            {"rag.query": "q", "rag.response": "a", "rag.retrieval.documents": '{"x": 1}'},
            "invalid_retrieval_json",
        ),
        ({"rag.query": 42, "rag.response": "a"}, "wrong_type"),
        (
            {
                "rag.query": "q",
                "rag.response": "a",
                "rag.retrieval.documents": json.dumps([{"content": "c", "score": "hi"}]),
            },
            "wrong_type",
        ),
        ({"rag.query": "q"}, "missing_attribute"),
        ({"rag.query": "q", "rag.response": "a", "rag.reference_contexts": "[1, 2]"}, "wrong_type"),
    ],
)
def test_bad_attributes_raise_a_named_reason(attributes: dict, reason: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        _extract(_native_span(**attributes))
    assert caught.value.reason == reason


def test_passages_without_text_keep_their_id_and_score() -> None:
    """The GenAI semconv's documents carry id and score only; the record is still made."""
    record = _extract(
        _native_span(
            **{
                "rag.query": "q",
                "rag.response": "a",
                "rag.retrieval.documents": json.dumps([{"id": "1", "score": 0.5}]),
            }
        )
    )
    assert [(n.id, n.text, n.score) for n in record.nodes] == [("1", "", 0.5)]


def test_reference_fields_for_reference_based_metrics() -> None:
    record = _extract(
        _native_span(
            **{
                "rag.query": "q",
                "rag.response": "a",
                "rag.retrieval.documents": json.dumps(["plain text node"]),
                "rag.expected_output": "expected",
                "rag.reference_contexts": json.dumps(["ref one", "ref two"]),
            }
        )
    )
    assert record.expected_output == "expected"
    assert record.reference_contexts == ("ref one", "ref two")
    assert record.nodes[0].text == "plain text node" and record.nodes[0].id == "0"


def test_openinference_json_input_value() -> None:
    from testkit.rag_traces import Collect, provider

    collect = Collect()
    tracer = provider(collect).get_tracer("t")
    with tracer.start_as_current_span("chain") as chain:
        chain.set_attributes(
            {
                "openinference.span.kind": "CHAIN",
                "input.value": json.dumps({"question": "What is RAG?"}),
                "input.mime_type": "application/json",
                "output.value": json.dumps({"answer": "Retrieval-augmented generation."}),
                "output.mime_type": "application/json",
            }
        )
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attributes(
                {
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.content": "RAG retrieves passages.",
                }
            )
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attributes(
                {"openinference.span.kind": "LLM", "output.value": "Retrieval-augmented generation."}
            )
    record = _extract(collect.spans)
    assert record.query == "What is RAG?"
    assert record.response == "Retrieval-augmented generation."


def _tool_span():
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

    from collector.spans import Span

    return Span("a" * 32, "b" * 16, "", "tool", 0, 1, {}, {}, ProtoSpan(), Resource())


@pytest.mark.parametrize(
    ("result", "passages"),
    [
        (
            json.dumps(["Hours are 9 to 5.", "Refunds: 14 days."]),
            [("0", "Hours are 9 to 5."), ("1", "Refunds: 14 days.")],
        ),
        (
            json.dumps(
                [{"id": "kb-1", "text": "Hours are 9 to 5."}, {"doc_id": "kb-2", "page_content": "Refunds."}]
            ),
            [("kb-1", "Hours are 9 to 5."), ("kb-2", "Refunds.")],
        ),
        (
            json.dumps({"results": [{"id": "kb-1", "content": "Hours are 9 to 5."}]}),
            [("kb-1", "Hours are 9 to 5.")],
        ),
        (  # LangChain's ToolMessage as OpenInference dumps it
            json.dumps(
                {"type": "tool", "data": {"content": "Hours are 9 to 5.\n\nRefunds.", "tool_call_id": "c1"}}
            ),
            [("0", "Hours are 9 to 5."), ("1", "Refunds.")],
        ),
        (  # LangChain JS documents, as a tool returns them
            json.dumps([{"pageContent": "Hours are 9 to 5.", "metadata": {"source": "hb"}, "id": "kb-1"}]),
            [("kb-1", "Hours are 9 to 5.")],
        ),
        (json.dumps([{"type": "text", "text": "Hours are 9 to 5."}]), [("0", "Hours are 9 to 5.")]),
        ("[1] Hours are 9 to 5.\n[2] Refunds.", [("1", "Hours are 9 to 5."), ("2", "Refunds.")]),
        ("Sources:\nHours are 9 to 5.", [("0", "Hours are 9 to 5.")]),
        ("", []),
        (json.dumps([]), []),
    ],
)
def test_a_tool_result_is_split_into_passages(result: str, passages: list[tuple[str, str]]) -> None:
    from collector.conventions.tools import tool_nodes

    assert [(n.id, n.text) for n in tool_nodes(result, _tool_span(), "result")] == passages


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ('{"query": "office hours"}', "office hours"),
        ("{'query': 'office hours'}", "office hours"),  # a Python repr, as LlamaIndex writes kwargs
        ('{"kwargs": {"input": "office hours"}}', "office hours"),
        ("office hours", "office hours"),
        ("{'query': ", "{'query':"),  # no literal: the text as it is
        (None, None),
    ],
)
def test_tool_arguments_give_their_text_not_the_dict(arguments: str | None, text: str | None) -> None:
    from collector.conventions.tools import argument_text

    assert argument_text(arguments) == text


def test_dspy_template_fields_and_answer() -> None:
    from collector.conventions.markup import answer_text, template_context, template_fields

    templated = "[[ ## reasoning ## ]]\nBecause.\n\n[[ ## answer ## ]]\n9 to 5.\n\n[[ ## completed ## ]]"
    assert template_fields(templated) == {"reasoning": "Because.", "answer": "9 to 5.", "completed": ""}
    assert answer_text(templated) == "9 to 5."
    assert answer_text("[[ ## summary ## ]]\nShort.\n\n[[ ## completed ## ]]") == "Short."
    assert (
        answer_text("Plain answer with [[ ## answer ## ]] inline.")
        == "Plain answer with [[ ## answer ## ]] inline."
    )
    assert template_context("[[ ## question ## ]]\nHours?") is None  # no context field
    assert template_context("[[ ## context ## ]]\nOne passage.\n\n[[ ## question ## ]]\nHours?") == (
        "Hours?",
        [("0", "One passage.")],
    )
