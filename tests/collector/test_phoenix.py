"""Phoenix span annotations, posted to a real Arize Phoenix server and read back through its REST API.

The app's trace reaches Phoenix over OTLP as it would from an OpenInference-instrumented app; ragpulse
annotates the anchor span of that trace. Phoenix runs from its own cached venv (scripts/phoenix-venv.sh,
built by scripts/setup.sh); locally, without it, these tests skip and say how to build it.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import format_span_id, format_trace_id

from collector.exporters.phoenix import PhoenixAnnotationExporter, PhoenixConfig, annotation
from collector.metrics import EXPORT_ERRORS
from collector.records import RagRecord, RetrievedNode
from collector.stages import Evaluation, Outcome
from evaluators import VerdictRecord
from testkit.process import free_port, http_status
from testkit.venvs import cached_python

PROJECT = "rag-app"


def phoenix_python() -> str:
    return cached_python("phoenix-venv.sh", "about 2 min, 0.9 GB")


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`phoenix serve` on free ports with its own working dir; its base URL."""
    python = phoenix_python()
    port, grpc_port = free_port(), free_port()
    workdir = tmp_path_factory.mktemp("phoenix")
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (workdir / "phoenix.log").open("wb")
    process = subprocess.Popen(
        [str(Path(python).parent / "phoenix"), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while http_status(f"{base_url}/healthz") != 200:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"phoenix serve did not start: {(workdir / 'phoenix.log').read_text()[-2000:]}"
                )
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def send_app_trace(base_url: str) -> tuple[str, str]:
    """An OpenInference-style RAG trace (chain -> retriever, LLM) to Phoenix; (trace id, LLM span id)."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": PROJECT, "openinference.project.name": PROJECT})
    )
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base_url}/v1/traces")))
    tracer = provider.get_tracer("rag-app")
    with tracer.start_as_current_span("query", attributes={"openinference.span.kind": "CHAIN"}):
        with tracer.start_as_current_span("retrieve", attributes={"openinference.span.kind": "RETRIEVER"}):
            pass
        attributes = {
            "openinference.span.kind": "LLM",
            "input.value": "How tall is the Eiffel Tower?",
            "output.value": "The Eiffel Tower is 500 m tall.",
        }
        with tracer.start_as_current_span("llm", attributes=attributes) as llm:
            context = llm.get_span_context()
    provider.shutdown()
    return format_trace_id(context.trace_id), format_span_id(context.span_id)


def make_record(trace_id: str, span_id: str) -> RagRecord:
    return RagRecord(
        trace_id=trace_id,
        anchor_span_id=span_id,
        query="How tall is the Eiffel Tower?",
        response="The Eiffel Tower is 500 m tall.",
        nodes=(RetrievedNode("kb-1", "The Eiffel Tower is 330 m tall.", 0.8),),
        service=PROJECT,
    )


FAITHFULNESS = Evaluation(
    metric="faithfulness",
    outcome=Outcome.FAILED,
    score=0.0,
    reason="0 of 1 claims supported: the context says 330 m.",
    threshold=0.5,
    lower_is_better=False,
    judge="openai",
    judge_model="gpt-4o-mini",
    cause="contradicted_claim",
    verdicts=(
        VerdictRecord(
            kind="claim",
            item="The Eiffel Tower is 500 m tall.",
            verdict="no",
            reason="330 m",
            check="supported",
            supporting_ids=[0],
        ),
    ),
    tokens=640,
    cost_usd=0.0002,
)
RELEVANCY = Evaluation(
    metric="answer_relevancy",
    outcome=Outcome.PASSED,
    score=1.0,
    reason="The answer addresses the question.",
    threshold=0.5,
    lower_is_better=False,
    judge="offline",
    judge_model="wordllama",
)


def read_annotations(
    base_url: str, span_id: str, count: int, timeout_s: float = 30.0
) -> list[dict[str, Any]]:
    """Phoenix inserts annotations asynchronously: poll until `count` are there."""
    deadline = time.monotonic() + timeout_s
    while True:
        response = httpx.get(
            f"{base_url}/v1/projects/{PROJECT}/span_annotations",
            params={"span_ids": [span_id], "limit": 100},
            timeout=10,
        )
        data: list[dict[str, Any]] = response.json()["data"] if response.status_code == 200 else []
        if len(data) >= count or time.monotonic() > deadline:
            return sorted(data, key=lambda a: a["name"])
        time.sleep(0.5)


def test_scores_become_annotations_on_the_answer_span(phoenix: str) -> None:
    trace_id, span_id = send_app_trace(phoenix)
    exporter = PhoenixAnnotationExporter(PhoenixConfig(endpoint=phoenix))
    record = make_record(trace_id, span_id)
    exporter.export(record, [FAITHFULNESS, RELEVANCY])
    assert exporter.force_flush(10.0)
    exporter.export(record, [FAITHFULNESS])  # a record scored again after a restart: overwritten, not doubled
    assert exporter.force_flush(10.0)
    exporter.shutdown()

    relevancy, faithfulness = read_annotations(phoenix, span_id, 2)
    time.sleep(1.0)  # the resend had time to land: still two
    assert len(read_annotations(phoenix, span_id, 3, timeout_s=0)) == 2

    assert faithfulness["span_id"] == span_id
    assert faithfulness["name"] == "faithfulness"
    assert faithfulness["annotator_kind"] == "LLM"
    assert faithfulness["identifier"] == "ragpulse"
    assert faithfulness["result"] == {
        "label": "failed",
        "score": 0.0,
        "explanation": "0 of 1 claims supported: the context says 330 m.",
    }
    metadata = faithfulness["metadata"]
    assert metadata["trace_id"] == trace_id
    assert metadata["cause"] == "contradicted_claim"
    assert metadata["verdicts"] == [
        {
            "kind": "claim",
            "verdict": "contradicted",
            "passages": [0],
            "item": "The Eiffel Tower is 500 m tall.",
            "reason": "330 m",
        }
    ]
    assert metadata["tokens"] == 640
    assert metadata["cost_usd"] == pytest.approx(0.0002)

    assert relevancy["annotator_kind"] == "CODE"  # the offline judge is no LLM
    assert relevancy["result"]["label"] == "passed"
    assert relevancy["result"]["score"] == 1.0


def test_an_annotation_may_arrive_before_the_trace(phoenix: str) -> None:
    """The app's exporter may deliver its trace after ragpulse scored it: Phoenix keeps the annotation
    and inserts it once the span is there (it retries every 10 s)."""
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": PROJECT}))
    span = provider.get_tracer("rag-app").start_span("llm", attributes={"openinference.span.kind": "LLM"})
    context = span.get_span_context()
    trace_id, span_id = format_trace_id(context.trace_id), format_span_id(context.span_id)
    exporter = PhoenixAnnotationExporter(PhoenixConfig(endpoint=phoenix))
    exporter.export(make_record(trace_id, span_id), [RELEVANCY])
    assert exporter.force_flush(10.0)
    exporter.shutdown()

    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces")))
    span.end()
    provider.shutdown()
    (annotated,) = read_annotations(phoenix, span_id, 1, timeout_s=40)
    assert annotated["name"] == "answer_relevancy"


def test_a_request_phoenix_refuses_is_counted_not_held(phoenix: str) -> None:
    """Phoenix reserves the name `note`: such a request will never be taken, so it is counted and let
    go at once instead of holding the offsets for `retry_for_s`."""
    trace_id, span_id = send_app_trace(phoenix)
    exporter = PhoenixAnnotationExporter(PhoenixConfig(endpoint=phoenix))
    before = EXPORT_ERRORS.labels("phoenix")._value.get()
    note = Evaluation("note", Outcome.PASSED, 1.0, "", 0.5, False, "offline", "wordllama")
    exporter.export(make_record(trace_id, span_id), [note, RELEVANCY])
    assert exporter.force_flush(10.0)
    exporter.shutdown()
    assert EXPORT_ERRORS.labels("phoenix")._value.get() == before + 2  # one request, both refused


def test_annotations_wait_while_phoenix_is_down() -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    exporter = PhoenixAnnotationExporter(PhoenixConfig(endpoint=endpoint, timeout_s=1.0, max_queue_size=2))
    before = EXPORT_ERRORS.labels("phoenix")._value.get()
    exporter.export(make_record("ab" * 16, "cd" * 8), [FAITHFULNESS, RELEVANCY])
    assert exporter.saturated
    assert not exporter.force_flush(5.0)  # not delivered: the offsets wait
    assert exporter.held == 2
    exporter.export(make_record("ab" * 16, "cd" * 8), [RELEVANCY])  # the hold is full: dropped, counted
    assert EXPORT_ERRORS.labels("phoenix")._value.get() == before + 1
    exporter.shutdown()

    given_up = PhoenixAnnotationExporter(PhoenixConfig(endpoint=endpoint, timeout_s=1.0, retry_for_s=0))
    given_up.export(make_record("ab" * 16, "cd" * 8), [FAITHFULNESS])
    assert given_up.force_flush(5.0)  # retry_for_s=0: given up at once and counted
    assert EXPORT_ERRORS.labels("phoenix")._value.get() == before + 2
    given_up.shutdown()


def test_hide_texts_sends_no_text() -> None:
    document = annotation(make_record("ab" * 16, "cd" * 8), FAITHFULNESS, hide_texts=True)
    assert document["result"]["explanation"] == "1 claim: 1 contradicted; cause: contradicted_claim"
    assert document["metadata"]["verdicts"] == [{"kind": "claim", "verdict": "contradicted", "passages": [0]}]
    assert "Eiffel" not in repr(document) and "330" not in repr(document)


def test_the_endpoint_is_a_base_url() -> None:
    assert PhoenixConfig(endpoint="http://phoenix:6006/").endpoint == "http://phoenix:6006"
    with pytest.raises(ValueError, match="base URL"):
        PhoenixConfig(endpoint="http://phoenix:6006/v1/span_annotations")
    assert PhoenixConfig().endpoint is None
