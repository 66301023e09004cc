"""Conformance: ragpulse scores the traces that real third-party instrumentation produces.

Per combination a real RAG app (LlamaIndex, LangChain, Haystack, or the `openai` SDK) instrumented by a
real instrumentation (OpenInference, OpenLLMetry, the official OTel GenAI one) exports with the stock
OTLP exporter to `ragpulse run`, started as a user starts it. The app's own view of each question
(expected.json: trace id, passages as the framework returned them, response) is the reference; the
collector's `rag_record` log lines and /metrics must agree with it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from testkit.kafka_forwarder import KafkaForwarder
from testkit.process import RagpulseProcess, free_port
from testkit.scrape import Scrape, scrape
from tests.instrumentation.apps import corpus
from tests.instrumentation.capture import COMBINATIONS, FIXTURES, ROOT, app_command, combination_name
from tests.instrumentation.llm_server import ScriptedLLMServer


@dataclass(frozen=True)
class Expect:
    """Which node fields the trace carries, so ragpulse must report them (texts always)."""

    ids: bool
    scores: bool
    where: str  # where the passages are in the trace, for the failure message
    conversation: bool = False  # the trace carries a conversation id (Pydantic AI: one per agent run)


EXPECTATIONS: dict[str, Expect] = {
    "llamaindex-openinference": Expect(True, True, "RETRIEVER span retrieval.documents.N.document.*"),
    "llamaindex-openllmetry": Expect(
        True, True, "VectorIndexRetriever.task traceloop.entity.output: JSON list of JSON NodeWithScore"
    ),
    "langchain-openinference": Expect(
        True, False, "RETRIEVER span: retrieval.documents.N.document.content, ids in output.value JSON"
    ),
    "langchain-openllmetry": Expect(False, False, "vector_db_retrieve span traceloop.entity.output JSON"),
    "haystack-openinference": Expect(True, True, "InMemoryBM25Retriever.run retrieval.documents.N.*"),
    "openai-openinference": Expect(False, False, "system message, llm.input_messages.0.message.content"),
    "openai-openllmetry": Expect(False, False, "system message in gen_ai.input.messages JSON"),
    "openai-otel-genai-events": Expect(False, False, "gen_ai.system.message log record body"),
    "openai-otel-genai-span": Expect(False, False, "system message in gen_ai.input.messages JSON"),
    # agents retrieving through a tool call, DSPy's templates (test_agents.py)
    "pydantic-ai-builtin": Expect(
        True, False, "execute_tool span gen_ai.tool.call.result: JSON list of {id, text}", conversation=True
    ),
    "langgraph-openinference": Expect(False, False, "TOOL span output.value: ToolMessage, text paragraphs"),
    "llamaindex-agent-openinference": Expect(
        True, True, "RETRIEVER span inside the QueryEngineTool's TOOL span: retrieval.documents.N.*"
    ),
    "dspy-openinference": Expect(False, False, "DSPy's [[ ## context ## ]] field of the LM span's prompt"),
    # LLM calls through LiteLLM and OpenLIT (test_agents.py)
    "litellm-openinference": Expect(False, False, "system message, llm.input_messages.0.message.content"),
    "litellm-builtin": Expect(
        False, False, "system message in gen_ai.input.messages, on the app's request span"
    ),
    "openai-openlit": Expect(
        False, False, "system message in gen_ai.input.messages (also in the details event)"
    ),
    "openai-stream-openlit": Expect(
        False, False, "the chat span's gen_ai.input.messages; the details event is logged on the parent span"
    ),
}
SETTLE_TIMEOUT_S = 60
_RECORD_LINE = re.compile(r"rag_record (\{.*\})\s*$", re.MULTILINE)


def run_app(
    python: str,
    app: str,
    instrumentation: str,
    llm: ScriptedLLMServer,
    out: Path,
    *extra: str,
    check: Callable[[list[dict[str, Any]]], None] | None = None,
) -> list:
    """Run one app to completion (it flushes on exit); return its expected.json, checked for sanity
    (`check`: what the app must have asked and got; the conformance apps' two questions by default)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACELOOP_"))}
    command = app_command(python, app, instrumentation, llm.base_url, "--expected", str(out), *extra)
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, f"the {app} app failed (harness, not ragpulse):\n{result.stderr[-4000:]}"
    expected = json.loads(out.read_text())
    (check or check_expected)(expected)
    return expected


def check_expected(expected: list[dict[str, Any]]) -> None:
    """The harness itself: the app asked both questions, got the scripted answers, retrieved the corpus."""
    texts = {p.text for p in corpus.PASSAGES}
    assert [e["question"] for e in expected] == [q.text for q in corpus.QUESTIONS]
    for item, question in zip(expected, corpus.QUESTIONS, strict=True):
        assert re.fullmatch(r"[0-9a-f]{32}", item["trace_id"]) and int(item["trace_id"], 16)
        assert item["response"] == question.answer and item["grounded"] == question.grounded
        assert len(item["passages"]) == corpus.TOP_K
        assert {p["text"] for p in item["passages"]} <= texts, "passages must be corpus passages"
    assert "45 days" in expected[0]["passages"][0]["text"], "the refund passage must be retrieved first"
    assert "27 days" in expected[1]["passages"][0]["text"], "the leave passage must be retrieved first"


def rag_records(output: str) -> list[dict[str, Any]]:
    return [json.loads(m.group(1)) for m in _RECORD_LINE.finditer(output)]


def wait_until_settled(
    collector: RagpulseProcess, trace_ids: set[str]
) -> tuple[list[dict[str, Any]], Scrape]:
    """Until every question has a record and its evaluations, or the collector has gone quiet."""
    deadline, last, stable_since = time.monotonic() + SETTLE_TIMEOUT_S, None, time.monotonic()
    while True:
        records, metrics = rag_records(collector.output()), scrape(collector.metrics_port)
        ours = [r for r in records if r["trace_id"] in trace_ids]
        evaluated = metrics.value("ragpulse_evaluations_total", metric="faithfulness")
        if {r["trace_id"] for r in ours} == trace_ids and evaluated >= len(ours):
            time.sleep(0.5)  # let a stray duplicate record show up too
            return rag_records(collector.output()), scrape(collector.metrics_port)
        state = (
            metrics.value("ragpulse_spans_received_total"),
            tuple(sorted(metrics.by_label("ragpulse_traces_total", "state").items())),
            evaluated,
            metrics.value("ragpulse_queue_depth"),
        )
        if state != last:
            last, stable_since = state, time.monotonic()
        idle = time.monotonic() - stable_since
        quiet = (state[0] > 0 and state[3] == 0 and idle > 4) or (state[0] == 0 and idle > 15)
        if quiet or time.monotonic() > deadline:
            return records, metrics
        time.sleep(0.3)


def exemplar_trace_id(metrics: Scrape, name: str, **labels: str) -> str | None:
    for sample in metrics.samples:
        if sample.name == name and labels.items() <= sample.labels.items() and sample.exemplar:
            return sample.exemplar.labels.get("trace_id")
    return None


def compare(
    combo: str, expected: list[dict[str, Any]], records: list[dict[str, Any]], metrics: Scrape
) -> list:
    """Every disagreement between the app's view and ragpulse's, as readable lines."""
    expect, problems = EXPECTATIONS[combo], []
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_trace.setdefault(record["trace_id"], []).append(record)
    for item in expected:
        kind = "grounded" if item["grounded"] else "planted"
        found = by_trace.get(item["trace_id"], [])
        if len(found) != 1:
            problems.append(
                f"{kind} question (trace {item['trace_id']}): {len(found)} rag_record lines, want 1"
            )
            if not found:
                continue
        record = found[0]
        for field, want in (
            ("query", item["question"]),
            ("response", item["response"]),
            ("service", item["service"]),
            ("route", item["route"]),
            ("model", item["model"]),
        ):
            if record.get(field) != want:
                problems.append(f"{kind}: {field} = {record.get(field)!r}, want {want!r}")
        nodes, passages = record.get("nodes") or [], item["passages"]
        if [n.get("text") for n in nodes] != [p["text"] for p in passages]:
            problems.append(
                f"{kind}: node texts {[n.get('text') for n in nodes]!r}, want the retrieved passages "
                f"{[p['text'] for p in passages]!r} (in the trace: {expect.where})"
            )
        if expect.ids and [n.get("id") for n in nodes] != [p["id"] for p in passages]:
            problems.append(
                f"{kind}: node ids {[n.get('id') for n in nodes]}, want {[p['id'] for p in passages]}"
            )
        scores = [n.get("score") for n in nodes]
        if expect.scores and scores != pytest.approx([p["score"] for p in passages]):
            problems.append(f"{kind}: node scores {scores}, want {[p['score'] for p in passages]}")
        if not expect.scores and any(s is not None for s in scores):
            problems.append(f"{kind}: node scores {scores}, but the trace carries none")
    stray = set(by_trace) - {e["trace_id"] for e in expected}
    if stray:
        problems.append(
            f"rag_record lines for traces that are no question (index building?): {sorted(stray)}"
        )
    for item in expected:
        outcome = "passed" if item["grounded"] else "failed"
        faithfulness = {"metric": "faithfulness", "service": item["service"]}
        count = metrics.value("ragpulse_evaluations_total", outcome=outcome, **faithfulness)
        exemplar = exemplar_trace_id(metrics, "ragpulse_evaluations_total", outcome=outcome, **faithfulness)
        if count != 1 or exemplar != item["trace_id"]:
            problems.append(
                f"faithfulness {outcome}: count {count}, exemplar trace {exemplar}, "
                f"want 1 and {item['trace_id']} "
                f"(all outcomes: {metrics.by_label('ragpulse_evaluations_total', 'outcome')})"
            )
        if not item["grounded"]:  # the app's model swaps the passage's numbers: a contradiction, its fault
            cause = {"metric": "faithfulness", "service": item["service"], "cause": "contradicted_claim"}
            count = metrics.value("ragpulse_failures_total", **cause)
            exemplar = exemplar_trace_id(metrics, "ragpulse_failures_total", **cause)
            if count != 1 or exemplar != item["trace_id"]:
                problems.append(
                    f"faithfulness failure cause: contradicted_claim count {count}, exemplar {exemplar}; "
                    f"causes: {metrics.by_label('ragpulse_failures_total', 'cause')}"
                )
    if not {e["trace_id"] for e in expected} <= metrics.exemplar_trace_ids():
        problems.append(f"score histogram exemplars {sorted(metrics.exemplar_trace_ids())} miss a question")
    return problems


def check_combination(
    python: str,
    llm: ScriptedLLMServer,
    app: str,
    instrumentation: str,
    tmp_path: Path,
    protocol: str = "http",
) -> None:
    combo, grpc_port = combination_name(app, instrumentation), free_port()
    args = ("--log-records", "--quiet-period", "1", "--otlp-grpc-port", str(grpc_port))
    with RagpulseProcess(*args) as collector:
        endpoint = (
            f"127.0.0.1:{grpc_port}" if protocol == "grpc" else f"http://127.0.0.1:{collector.otlp_port}"
        )
        extra = ("--endpoint", endpoint, "--protocol", protocol)
        expected = run_app(python, app, instrumentation, llm, tmp_path / "expected.json", *extra)
        records, metrics = wait_until_settled(collector, {e["trace_id"] for e in expected})
        problems = compare(combo, expected, records, metrics)
        traces = metrics.by_label("ragpulse_traces_total", "state")
        output = collector.output()
    assert not problems, (
        f"{combo} over {protocol}: ragpulse disagrees with the app\n  "
        + "\n  ".join(problems)
        + f"\ntraces by state: {traces}\ncollector log (tail):\n{output[-3000:]}"
    )


@pytest.mark.instrumentation
@pytest.mark.parametrize(
    ("app", "instrumentation"), COMBINATIONS, ids=[combination_name(*c) for c in COMBINATIONS]
)
def test_conformance(
    instrumentation_venv: str, llm_server: ScriptedLLMServer, app: str, instrumentation: str, tmp_path: Path
) -> None:
    check_combination(instrumentation_venv, llm_server, app, instrumentation, tmp_path)


@pytest.mark.instrumentation
def test_conformance_over_grpc(
    instrumentation_venv: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """Spans and the GenAI log records over OTLP/gRPC (`ragpulse run --otlp-grpc-port`)."""
    check_combination(instrumentation_venv, llm_server, "openai", "otel-genai-events", tmp_path, "grpc")


@pytest.mark.instrumentation
def test_conformance_through_kafka(
    instrumentation_venv: str, llm_server: ScriptedLLMServer, kafka_bootstrap: str, topic: str, tmp_path: Path
) -> None:
    """LlamaIndex + OpenInference through Kafka in the OTel Collector's `otlp_proto` wire format."""
    args = ("--log-records", "--quiet-period", "1", "--kafka-bootstrap", kafka_bootstrap, "--topic", topic)
    with KafkaForwarder(kafka_bootstrap, topic) as forwarder, RagpulseProcess(*args) as collector:
        extra = ("--endpoint", forwarder.endpoint, "--protocol", "http")
        expected = run_app(
            instrumentation_venv, "llamaindex", "openinference", llm_server, tmp_path / "e.json", *extra
        )
        records, metrics = wait_until_settled(collector, {e["trace_id"] for e in expected})
        problems = compare("llamaindex-openinference", expected, records, metrics)
        assert forwarder.records >= len(expected), "the app's traces did not reach Kafka"
        assert not problems, "through Kafka, ragpulse disagrees with the app\n  " + "\n  ".join(problems)


def check_committed_capture(folder: Path) -> dict[str, Any]:
    """A committed capture holds the app's questions and every question's trace; its logs, returned."""
    expected = json.loads((folder / "expected.json").read_text())
    check_expected(expected)
    traces = json.loads((folder / "traces.json").read_text())
    span_traces = {
        span["traceId"]
        for resource in traces["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    }
    assert {e["trace_id"] for e in expected} <= span_traces
    logs: dict[str, Any] = json.loads((folder / "logs.json").read_text())
    return logs


@pytest.mark.parametrize("combo", [combination_name(*c) for c in COMBINATIONS])
def test_committed_fixture_is_consistent(combo: str) -> None:
    """The committed captures hold the app's questions and every question's trace (no venv needed)."""
    logs = check_committed_capture(FIXTURES / combo)
    assert bool(logs) == (combo == "openai-otel-genai-events"), "only the events mode puts content in logs"
