"""Images in traces become image passages of the record: message image parts in the OpenInference,
GenAI and OpenLLMetry vocabularies, image documents, the size cap (counted), and what leaves for an
external judge. The real OpenInference capture is tested in tests/instrumentation/test_images.py.
"""

from __future__ import annotations

import json

from opentelemetry.trace import Tracer

from collector.assembly.assembler import TraceAssembler
from collector.conventions import extract
from collector.judging.cases import to_test_case
from collector.judging.evaluator import RecordEvaluator
from collector.judging.outbound import Outbound, OutboundConfig
from collector.metrics import IMAGES_LEFT_OUT
from collector.pipeline.offsets import NoAck
from collector.receivers.decode import decode
from collector.spans import flatten
from evaluators import CaseResult, JudgeInfo, MetricResult, Outcome, TestCase
from evaluators.images import MAX_DATA_URI_CHARS
from testkit.rag_traces import Collect, encode, provider

PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
CHART = "https://example.com/figures/chart.png"
QUESTION, ANSWER = "What does the chart show?", "Refunds rose by 12% in March."


def _records(collect: Collect):
    assembler = TraceAssembler()
    assembler.add(flatten(decode(encode(collect.spans))), NoAck(), 0.0, [])
    return [record for trace in assembler.drain() for record in extract(trace.trace_id, trace.spans)]


def _left_out(reason: str) -> float:
    return IMAGES_LEFT_OUT.labels(reason)._value.get()


def _openinference_llm(tracer: Tracer, images: list[str], *, system: str = "") -> None:
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": system,
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": QUESTION,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": ANSWER,
    }
    for n, url in enumerate(images, start=1):
        attributes[f"llm.input_messages.1.message.contents.{n}.message_content.type"] = "image"
        attributes[f"llm.input_messages.1.message.contents.{n}.message_content.image.image.url"] = url
    with tracer.start_as_current_span("ChatCompletion") as span:
        span.set_attributes(attributes)


def test_openinference_image_parts_are_passages_and_redacted_ones_are_counted() -> None:
    collect = Collect()
    tracer = provider(collect).get_tracer("openinference.instrumentation.openai")
    before = _left_out("not_recognised")
    _openinference_llm(tracer, [PIXEL, "__REDACTED__", CHART])
    (record,) = _records(collect)
    assert (record.query, record.response) == (QUESTION, ANSWER)
    assert [(n.id, n.text) for n in record.nodes] == [("image-0", PIXEL), ("image-1", CHART)]
    assert _left_out("not_recognised") == before + 1  # OpenInference's placeholder past its own limit
    case = to_test_case(record)
    assert case.retrieval_context == [PIXEL, CHART]


def test_prompt_images_follow_the_retrieved_passages_once_each() -> None:
    collect = Collect()
    tracer = provider(collect).get_tracer("openinference.instrumentation.llama_index")
    with tracer.start_as_current_span("query") as chain:
        chain.set_attributes({"openinference.span.kind": "CHAIN", "input.value": QUESTION})
        with tracer.start_as_current_span("retrieve") as span:
            span.set_attributes({"openinference.span.kind": "RETRIEVER", "input.value": QUESTION})
            for i, (doc_id, text) in enumerate([("doc-1", "Refund figures by month."), ("fig-2", CHART)]):
                span.set_attribute(f"retrieval.documents.{i}.document.id", doc_id)
                span.set_attribute(f"retrieval.documents.{i}.document.content", text)
        _openinference_llm(tracer, [CHART, PIXEL], system="Refund figures by month.")
    (record,) = _records(collect)
    assert [(n.id, n.text) for n in record.nodes] == [
        ("doc-1", "Refund figures by month."),
        ("fig-2", CHART),  # an image document is an image passage as it stands
        ("image-0", PIXEL),  # the chart was retrieved already: one passage
    ]


def test_an_oversized_data_uri_document_keeps_its_slot_not_its_bytes() -> None:
    huge = "data:image/png;base64," + "A" * MAX_DATA_URI_CHARS
    collect = Collect()
    tracer = provider(collect).get_tracer("openinference.instrumentation.llama_index")
    before = _left_out("too_large")
    with tracer.start_as_current_span("query") as chain:
        chain.set_attributes({"openinference.span.kind": "CHAIN", "input.value": QUESTION})
        with tracer.start_as_current_span("retrieve") as span:
            span.set_attributes({"openinference.span.kind": "RETRIEVER", "input.value": QUESTION})
            span.set_attribute("retrieval.documents.0.document.id", "scan-1")
            span.set_attribute("retrieval.documents.0.document.content", huge)
            span.set_attribute("retrieval.documents.1.document.id", "doc-2")
            span.set_attribute("retrieval.documents.1.document.content", "Refunds rose by 12% in March.")
        _openinference_llm(tracer, [])
    (record,) = _records(collect)
    assert [(n.id, n.text) for n in record.nodes] == [("scan-1", ""), ("doc-2", ANSWER)]
    assert _left_out("too_large") == before + 1


def test_genai_blob_and_uri_parts_on_the_span() -> None:
    messages = [
        {
            "role": "user",
            "parts": [
                {"type": "text", "content": QUESTION},
                {
                    "type": "blob",
                    "modality": "image",
                    "mime_type": "image/png",
                    "content": PIXEL.split(",")[1],
                },
                {"type": "uri", "modality": "image", "uri": CHART},
                {"type": "uri", "modality": "video", "uri": "https://example.com/clip.mp4"},
            ],
        }
    ]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]
    collect = Collect()
    tracer = provider(collect).get_tracer("opentelemetry.instrumentation.openai_v2")
    with tracer.start_as_current_span("chat gpt-4o") as span:
        span.set_attributes(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps(output),
            }
        )
    (record,) = _records(collect)
    assert [n.text for n in record.nodes] == [PIXEL, CHART]


def test_openllmetry_flattened_prompt_with_openai_image_parts() -> None:
    content = [{"type": "text", "text": QUESTION}, {"type": "image_url", "image_url": {"url": PIXEL}}]
    collect = Collect()
    tracer = provider(collect).get_tracer("opentelemetry.instrumentation.openai")
    with tracer.start_as_current_span("openai.chat") as span:
        span.set_attributes(
            {
                "llm.request.type": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": json.dumps(content),
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": ANSWER,
            }
        )
    (record,) = _records(collect)
    assert (record.query, [n.text for n in record.nodes]) == (QUESTION, [PIXEL])


class _Echo:
    info = JudgeInfo("openai", "scripted")

    def __init__(self) -> None:
        self.seen: list[TestCase] = []

    async def score(self, case: TestCase, metrics) -> CaseResult:
        self.seen.append(case)
        return CaseResult(case_id=case.id or "", results=[])

    def shutdown(self) -> None:
        pass


async def test_images_leave_for_an_external_judge_whole_and_unmasked() -> None:
    image = "data:image/png;base64," + "5555123456789" * 400  # digits a phone mask would eat, and long
    inner = _Echo()
    outbound = Outbound(inner, OutboundConfig(max_passage_chars=100))
    case = TestCase(input=QUESTION, actual_output=ANSWER, retrieval_context=["call 555 123 4567", image])
    await outbound.score(case, ["multimodal_faithfulness"])
    assert inner.seen[0].retrieval_context == ["call [phone-1]", image]


class _Scorer:
    def __init__(self, name: str, outcome: Outcome, score: float | None) -> None:
        self.info = JudgeInfo(name, "m")
        self.result = MetricResult(
            name="multimodal_faithfulness", outcome=outcome, score=score, threshold=0.5
        )
        self.asked: list[list[str]] = []

    async def score(self, case: TestCase, metrics) -> CaseResult:
        self.asked.append(list(metrics))
        return CaseResult(case_id=case.id or "", results=[self.result])

    def shutdown(self) -> None:
        pass


async def test_the_cascade_sends_image_cases_the_offline_judge_cannot_see_to_the_llm() -> None:
    offline = _Scorer("offline", Outcome.UNMEASURED, None)
    llm = _Scorer("openai", Outcome.PASSED, 1.0)
    evaluator = RecordEvaluator(offline, llm)
    with_image = TestCase(id="a", input=QUESTION, actual_output=ANSWER, retrieval_context=[CHART])
    text_only = with_image.model_copy(update={"id": "b", "retrieval_context": ["Refunds rose in March."]})
    evaluations, _ = await evaluator.evaluate(None, ["multimodal_faithfulness"], with_image)  # type: ignore[arg-type]
    assert llm.asked == [["multimodal_faithfulness"]] and evaluations[0].judge == "openai"
    await evaluator.evaluate(None, ["multimodal_faithfulness"], text_only)  # type: ignore[arg-type]
    assert len(llm.asked) == 1  # unmeasured on a text-only case is the offline judge's honest answer
