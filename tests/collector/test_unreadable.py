"""Traces ragpulse cannot read are shown where people look: `/metrics` and the page count them per
service and reason, and `ragpulse inspect` gives the same reason for the same trace. Spans made with the
OTel SDK as an app makes them, sent to a real `ragpulse run`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from collector.conventions import UNREADABLE
from testkit.collector_runner import wait_for
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import Collect, encode, provider
from testkit.scrape import scrape

UNREADABLE_TRACES = "ragpulse_unreadable_traces_total"


def _index_build() -> list[ReadableSpan]:
    """An embedding batch (an index build): no retrieval, no LLM call."""
    sink = Collect()
    tracer = provider(sink, service="indexer").get_tracer("app")
    with tracer.start_as_current_span("embeddings text-embedding-3-small", kind=SpanKind.CLIENT) as span:
        span.set_attribute("gen_ai.operation.name", "embeddings")
        span.set_attribute("gen_ai.request.model", "text-embedding-3-small")
    return sink.spans


def _chat_without_context() -> list[ReadableSpan]:
    """A chat call whose prompt holds a question and no context: nothing to judge grounding against."""
    sink = Collect()
    tracer = provider(sink, service="chatbot").get_tracer("app")
    with (
        tracer.start_as_current_span("POST /ask", kind=SpanKind.SERVER),
        tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT) as span,
    ):
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.request.model", "gpt-4o-mini")
        question = [{"role": "user", "parts": [{"type": "text", "content": "What are the hours?"}]}]
        answer = [{"role": "assistant", "parts": [{"type": "text", "content": "9 to 5."}]}]
        span.set_attribute("gen_ai.input.messages", json.dumps(question))
        span.set_attribute("gen_ai.output.messages", json.dumps(answer))
    return sink.spans


def test_traces_with_no_rag_data_are_counted_by_service_and_reason_on_metrics_the_page_and_inspect(
    tmp_path: Path,
) -> None:
    traces = {"indexer": _index_build(), "chatbot": _chat_without_context()}
    with RagpulseProcess("--quiet-period", "0.3") as ragpulse:
        for spans in traces.values():
            assert post_traces(ragpulse.otlp_port, encode(spans))[0] == 200
        wait_for(
            lambda: scrape(ragpulse.metrics_port).value(UNREADABLE_TRACES) >= 2, 30, "both traces counted"
        )
        metrics = scrape(ragpulse.metrics_port)
        page = httpx.get(f"{ragpulse.metrics_url}/").text
        overview = httpx.get(f"{ragpulse.metrics_url}/api/overview").json()["pipeline"]
    assert metrics.value(UNREADABLE_TRACES, service="indexer", reason="not_rag") == 1
    assert metrics.value(UNREADABLE_TRACES, service="chatbot", reason="no_context") == 1
    assert overview["no_rag_data"] == 2 and overview["traces_received"] == 2
    assert [(u["service"], u["reason"], u["count"]) for u in overview["unreadable"]] == [
        ("chatbot", "no_context", 1),
        ("indexer", "not_rag", 1),
    ]
    assert 'id="unreadable"' in page and "2 of 2 traces received held no RAG data" in page
    assert UNREADABLE["no_context"] in page and UNREADABLE["not_rag"].split(":")[0] in page

    path = tmp_path / "chat.pb"
    path.write_bytes(encode(traces["chatbot"]))
    inspected = subprocess.run(
        [sys.executable, "-m", "collector.commands.cli", "inspect", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"no_context: {UNREADABLE['no_context']}" in inspected.stdout, inspected.stdout
