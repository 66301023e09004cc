"""Evaluation results arrive as `gen_ai.evaluation.result` log records in a real OpenTelemetry Collector.

`ragpulse run` scores a real trace sent to its OTLP receiver, with `otel_export` pointed at a Collector
built from its Go modules (testkit/otelcol, scripts/otelcol.sh) whose file exporter stores what it was
given as OTLP JSON; the test reads those files: one log record per metric, named as the GenAI
conventions say, in the evaluated span's trace and span, and the evaluation spans beside them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testkit.collector_runner import wait_for
from testkit.openai_server import ScriptedOpenAIServer
from testkit.otelcol import OtelCollector, build
from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.scrape import scrape

# The first test builds the Collector when scripts/setup.sh has not (scripts/otelcol.sh: minutes, once).
pytestmark = pytest.mark.timeout(900)

METRICS = ("faithfulness", "answer_relevancy")
CASE = RagCase(
    query="What is the capital of France?",
    nodes=[("d1", "Paris is the capital and largest city of France.", 0.9)],
    response="Paris is the capital of France.",
)


@pytest.fixture(scope="module")
def otelcol() -> Path:
    return build()


def config(tmp_path: Path, judge_url: str, collector: OtelCollector, otel_export: str = "") -> Path:
    path = tmp_path / "ragpulse.yaml"
    path.write_text(
        f"judge: {{base_url: '{judge_url}', model: scripted, max_retries: 0, timeout_s: 10}}\n"
        f"sampling: {{metrics: [{', '.join(METRICS)}]}}\n"
        f"otel_export: {{endpoint: '{collector.traces_url}'{otel_export}}}\n"
    )
    return path


def score_one_trace(
    tmp_path: Path, collector: OtelCollector, otel_export: str = "", refused: int = 0
) -> tuple[str, str, int, str]:
    """Sends one RAG trace (one span, the evaluated one) through `ragpulse run`, waits until its
    evaluation spans reached the collector (and `refused` log events were counted as refused), and
    stops it; (trace id, evaluated span id, ragpulse's exit code, its log)."""
    (span,) = make_spans("ragpulse", CASE)
    trace_id, span_id = f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}"
    with ScriptedOpenAIServer() as judge:
        ragpulse = RagpulseProcess(
            "--config", str(config(tmp_path, judge.base_url, collector, otel_export)), "--quiet-period", "0.2"
        ).start()
        try:
            assert post_traces(ragpulse.otlp_port, encode([span]))[0] == 200
            wait_for(lambda: len(evaluation_spans(collector)) == len(METRICS), 120, "the evaluation spans")
            if refused:
                port = ragpulse.metrics_port
                wait_for(lambda: refused_log_events(port) == refused, 30, "the refused log events counted")
        finally:
            code = ragpulse.stop()  # drains: everything held is flushed before it exits
    return trace_id, span_id, code, ragpulse.output()


def refused_log_events(metrics_port: int) -> float:
    return scrape(metrics_port).value("ragpulse_export_errors_total", exporter="otlp_logs")


def evaluation_spans(collector: OtelCollector) -> list[dict[str, Any]]:
    return [span for span in collector.spans() if span["name"].startswith("evaluation ")]


def test_one_log_event_per_metric_parented_to_the_evaluated_span(tmp_path: Path, otelcol: Path) -> None:
    with OtelCollector(tmp_path, binary=otelcol) as collector:
        trace_id, span_id, code, _ = score_one_trace(tmp_path, collector)
        wait_for(lambda: len(collector.log_records()) >= len(METRICS), 30, "the log events")
        spans, records = evaluation_spans(collector), collector.log_records()
    assert code == 0

    assert sorted(r["attributes"]["gen_ai.evaluation.name"] for r in records) == sorted(METRICS)
    by_metric = {span["attributes"]["gen_ai.evaluation.name"]: span for span in spans}
    for record in records:
        assert record["eventName"] == "gen_ai.evaluation.result"
        assert (record["traceId"], record["spanId"]) == (trace_id, span_id)  # the evaluated span
        assert record["severityNumber"] == 9  # SEVERITY_NUMBER_INFO
        assert record["resource"]["service.name"] == "ragpulse"
        attributes = record["attributes"]
        assert attributes["gen_ai.evaluation.score.label"] in {"passed", "failed"}
        assert 0.0 <= attributes["gen_ai.evaluation.score.value"] <= 1.0
        assert attributes["gen_ai.evaluation.explanation"]
        assert "error.type" not in attributes
        # The evaluation span's own attributes: one place builds both.
        assert attributes == by_metric[attributes["gen_ai.evaluation.name"]]["attributes"]
    for span in spans:  # the evaluation spans still arrive, children of the evaluated span
        assert (span["traceId"], span["parentSpanId"]) == (trace_id, span_id)
        assert "events" not in span  # the deprecated span event is off by default


def test_the_span_event_comes_back_when_asked_for(tmp_path: Path, otelcol: Path) -> None:
    with OtelCollector(tmp_path, binary=otelcol) as collector:
        score_one_trace(tmp_path, collector, ", span_event: true")
        wait_for(lambda: len(collector.log_records()) >= len(METRICS), 30, "the log events")
        spans, records = evaluation_spans(collector), collector.log_records()
    assert len(records) == len(METRICS)
    for span in spans:
        (event,) = span["events"]
        assert event["name"] == "gen_ai.evaluation.result"
        assert {pair["key"] for pair in event["attributes"]} == set(span["attributes"])


def test_a_collector_without_a_logs_pipeline_costs_the_spans_nothing(tmp_path: Path, otelcol: Path) -> None:
    """A backend that takes no OTLP logs answers 404 at /v1/logs: the log events are dropped and
    counted once (`ragpulse_export_errors_total{exporter="otlp_logs"}`), the spans arrive, and ragpulse
    drains and exits cleanly instead of holding its commits for `retry_for_s`."""
    with OtelCollector(tmp_path, signals=("traces",), binary=otelcol) as collector:
        _, _, code, log = score_one_trace(tmp_path, collector, refused=len(METRICS))
        spans = evaluation_spans(collector)
    assert code == 0
    (line,) = [line for line in log.splitlines() if "evaluation log events" in line]
    assert "refused 2 evaluation log events (HTTP 404)" in line and "otel_export.log_events: false" in line
    assert "Traceback" not in log
    assert len(spans) == len(METRICS)
    assert not collector.logs_file.exists()
