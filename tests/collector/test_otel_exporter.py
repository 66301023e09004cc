"""Evaluation spans and `gen_ai.evaluation.result` log events over real OTLP/HTTP, captured by ragpulse's
own receiver and by the OTLP sink (tests/collector/test_evaluation_log_events.py: a real Collector)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2
from pydantic import ValidationError

from collector import __version__
from collector.exporters.otel_spans import OtelExportConfig, OtelSpanExporter
from collector.exporters.verdicts import VerdictLimits
from collector.metrics import EXPORT_ERRORS, VERDICTS_TRUNCATED
from collector.pipeline.deadletter import LogDeadLetters
from collector.receivers.otlp import OtlpConfig
from collector.receivers.otlp_http import OtlpHttpReceiver
from collector.records import RagRecord, RetrievedNode
from collector.spans import Span
from collector.stages import Evaluation, Outcome, Received
from evaluators import VerdictRecord
from testkit.otlp_sink import OtlpSink, SinkMode
from testkit.process import free_port

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
ANCHOR_SPAN_ID = "b7ad6b7169203331"


class Capture:
    def __init__(self) -> None:
        self.spans: list[Span] = []
        self._arrived = threading.Condition()

    def deliver(self, received: Received) -> None:
        with self._arrived:
            self.spans.extend(received.spans)
            self._arrived.notify_all()

    def wait_for(self, count: int, timeout_s: float = 10.0) -> list[Span]:
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.spans) >= count, timeout_s)
            return list(self.spans)


@pytest.fixture
def capture() -> Iterator[tuple[Capture, str]]:
    receiver = OtlpHttpReceiver(OtlpConfig(port=0), LogDeadLetters())
    captured = Capture()
    receiver.start(captured.deliver)
    try:
        yield captured, f"http://127.0.0.1:{receiver.port}/v1/traces"
    finally:
        receiver.shutdown()


def make_record() -> RagRecord:
    return RagRecord(
        trace_id=TRACE_ID,
        anchor_span_id=ANCHOR_SPAN_ID,
        query="What is the capital of France?",
        response="Paris is the capital of France. It has 90 million people.",
        nodes=(RetrievedNode("d1", "Paris is the capital and largest city of France.", 0.82),),
        service="rag-api",
        route="/api/ask",
        model="gpt-4o-mini",
        service_version="2025.06.1",
        conversation_id="session-7",
    )


def evaluation(metric: str, outcome: Outcome, score: float | None, reason: str) -> Evaluation:
    return Evaluation(
        metric=metric,
        outcome=outcome,
        score=score,
        reason=reason,
        threshold=0.5,
        lower_is_better=metric == "hallucination",
        judge="openai",
        judge_model="gpt-4o-mini",
        duration_s=0.25,
    )


EVALUATIONS = (
    evaluation(
        "faithfulness", Outcome.PASSED, 0.5, "1 of 2 claims supported: 90 million is not in the context."
    ),
    evaluation("answer_relevancy", Outcome.FAILED, 0.25, "x" * 5_000),
    evaluation("contextual_relevancy", Outcome.ERROR, None, "judge timed out after 30 s"),
)


def test_one_span_per_metric_in_the_evaluated_trace(capture: tuple[Capture, str]) -> None:
    captured, endpoint = capture
    exporter = OtelSpanExporter(OtelExportConfig(endpoint=endpoint, max_explanation_chars=200))
    exporter.export(make_record(), EVALUATIONS)
    assert exporter.force_flush(10.0)
    spans = {span.name: span for span in captured.wait_for(len(EVALUATIONS))}
    exporter.shutdown()

    assert set(spans) == {f"evaluation {e.metric}" for e in EVALUATIONS}
    for span in spans.values():
        assert span.trace_id == TRACE_ID
        assert span.parent_span_id == ANCHOR_SPAN_ID
        assert span.raw.kind == trace_pb2.Span.SPAN_KIND_INTERNAL
        assert [(link.trace_id.hex(), link.span_id.hex()) for link in span.raw.links] == [
            (TRACE_ID, ANCHOR_SPAN_ID)
        ]
        assert span.resource["service.name"] == "ragpulse"
        assert span.attributes["ragpulse.version"] == __version__
        assert span.attributes["gen_ai.conversation.id"] == "session-7"  # a span attribute, never a label
        # The app's version (this span's resource is ragpulse's own); no prompt version was recorded.
        assert span.attributes["ragpulse.record.service_version"] == "2025.06.1"
        assert "ragpulse.record.prompt_version" not in span.attributes
        assert span.attributes["ragpulse.judge"] == "openai"
        assert span.attributes["ragpulse.judge.model"] == "gpt-4o-mini"
        assert span.end_ns - span.start_ns == pytest.approx(0.25e9, abs=1e6)
        assert not span.events  # the span event API is deprecated: the result is a log event now

    faithfulness = spans["evaluation faithfulness"]
    assert faithfulness.attributes["gen_ai.evaluation.name"] == "faithfulness"
    assert faithfulness.attributes["gen_ai.evaluation.score.value"] == 0.5
    assert faithfulness.attributes["gen_ai.evaluation.score.label"] == "passed"  # Prometheus' outcome word
    assert "90 million" in faithfulness.attributes["gen_ai.evaluation.explanation"]
    assert faithfulness.raw.status.code == trace_pb2.Status.STATUS_CODE_UNSET

    relevancy = spans["evaluation answer_relevancy"]
    assert relevancy.attributes["gen_ai.evaluation.score.label"] == "failed"
    assert relevancy.attributes["gen_ai.evaluation.explanation"] == "x" * 200

    errored = spans["evaluation contextual_relevancy"]
    assert "gen_ai.evaluation.score.value" not in errored.attributes
    assert errored.attributes["gen_ai.evaluation.score.label"] == "error"
    assert errored.attributes["error.type"] == "evaluation_error"
    assert errored.raw.status.code == trace_pb2.Status.STATUS_CODE_ERROR
    assert errored.raw.status.message == "judge timed out after 30 s"


CLAIMS = (
    VerdictRecord(
        kind="claim",
        item="Paris is the capital of France.",
        verdict="yes",
        check="supported",
        supporting_ids=[0],
    ),
    VerdictRecord(
        kind="claim",
        item="It has 90 million people.",
        verdict="no",
        reason="the passage says 2 million",
        check="supported",
        supporting_ids=[0],
    ),
    VerdictRecord(kind="claim", item="It is old.", verdict="idk", check="supported"),
)
FAILED_FAITHFULNESS = Evaluation(
    metric="faithfulness",
    outcome=Outcome.FAILED,
    score=1 / 3,
    reason="1 of 3 claims supported: 90 million contradicts the passage.",
    threshold=0.5,
    lower_is_better=False,
    judge="openai",
    judge_model="gpt-4o-mini",
    cause="contradicted_claim",
    verdicts=CLAIMS,
    tokens=812,
    cost_usd=0.00031,
)


def export_one(capture: Capture, exporter: OtelSpanExporter, item: Evaluation) -> Span:
    exporter.export(make_record(), [item])
    assert exporter.force_flush(10.0)
    exporter.shutdown()
    (span,) = capture.wait_for(1)
    return span


def test_the_verdicts_cause_and_spend_travel_with_the_score(capture: tuple[Capture, str]) -> None:
    """A Tempo query finds failures by cause (`span.ragpulse.evaluation.cause = "contradicted_claim"`)
    and the span says which claim the judge found contradicted, by which passage, and what it cost."""
    captured, endpoint = capture
    limits = VerdictLimits(max_items=2, max_reason_chars=10)
    exporter = OtelSpanExporter(OtelExportConfig(endpoint=endpoint, span_event=True), limits)
    before = VERDICTS_TRUNCATED.labels("otlp")._value.get()
    span = export_one(captured, exporter, FAILED_FAITHFULNESS)

    attributes = span.attributes
    assert attributes["gen_ai.evaluation.score.label"] == "failed"
    assert attributes["ragpulse.evaluation.cause"] == "contradicted_claim"
    assert attributes["ragpulse.judge.tokens"] == 812
    assert attributes["ragpulse.judge.cost_usd"] == pytest.approx(0.00031)
    assert json.loads(str(attributes["ragpulse.evaluation.verdicts"])) == [
        {
            "kind": "claim",
            "verdict": "supported",
            "passages": [0],
            "item": "Paris is the capital of France.",
            "reason": "",
        },
        {
            "kind": "claim",
            "verdict": "contradicted",
            "passages": [0],
            "item": "It has 90 million people.",
            "reason": "the passag",  # max_reason_chars
        },
    ]
    assert attributes["ragpulse.evaluation.verdicts_truncated"] == 1  # max_items=2 of 3
    assert VERDICTS_TRUNCATED.labels("otlp")._value.get() == before + 1
    assert "90 million" in attributes["gen_ai.evaluation.explanation"]
    (event,) = span.events  # span_event: true, as before the log events
    assert event.name == "gen_ai.evaluation.result"
    assert event.attributes == attributes


def test_hide_texts_sends_no_text(capture: tuple[Capture, str]) -> None:
    """With `hide_texts` the span says what was judged and why it failed, never a word of the answer,
    the passages or the judge's reasons."""
    captured, endpoint = capture
    exporter = OtelSpanExporter(OtelExportConfig(endpoint=endpoint), hide_texts=True)
    span = export_one(captured, exporter, FAILED_FAITHFULNESS)

    attributes = span.attributes
    assert attributes["gen_ai.evaluation.explanation"] == (
        "3 claims: 1 supported, 1 contradicted, 1 not_found; cause: contradicted_claim"
    )
    assert json.loads(str(attributes["ragpulse.evaluation.verdicts"])) == [
        {"kind": "claim", "verdict": "supported", "passages": [0]},
        {"kind": "claim", "verdict": "contradicted", "passages": [0]},
        {"kind": "claim", "verdict": "not_found", "passages": []},
    ]
    assert "ragpulse.evaluation.verdicts_truncated" not in attributes
    every_value = repr(span.raw)
    for text in ("Paris", "90 million", "passage says", "It is old", "France"):
        assert text not in every_value


def test_an_error_without_verdicts_hides_its_reason_too(capture: tuple[Capture, str]) -> None:
    captured, endpoint = capture
    exporter = OtelSpanExporter(OtelExportConfig(endpoint=endpoint), hide_texts=True)
    errored = evaluation("faithfulness", Outcome.ERROR, None, "judge returned: 'Paris has 90 million'")
    span = export_one(captured, exporter, errored)
    assert span.attributes["gen_ai.evaluation.score.label"] == "error"
    assert span.attributes["gen_ai.evaluation.explanation"] == "error"
    assert span.attributes["error.type"] == "evaluation_error"
    assert span.raw.status.message == "error"
    assert "ragpulse.evaluation.verdicts" not in span.attributes
    assert "ragpulse.evaluation.cause" not in span.attributes


def test_why_a_metric_is_unmeasured_stays_under_hide_texts(capture: tuple[Capture, str]) -> None:
    """An unmeasured reason is ragpulse's own words, no user text: hiding it would leave nobody able
    to tell why a metric has no score."""
    captured, endpoint = capture
    exporter = OtelSpanExporter(OtelExportConfig(endpoint=endpoint), hide_texts=True)
    why = "unmeasured: no reference context ids to compare against"
    span = export_one(captured, exporter, evaluation("retrieval_mrr", Outcome.UNMEASURED, None, why))
    assert span.attributes["gen_ai.evaluation.explanation"] == why


def test_unreachable_endpoint_is_counted_not_raised() -> None:
    closed_port_endpoint = f"http://127.0.0.1:{free_port()}/v1/traces"  # nothing listens there
    config = OtelExportConfig(endpoint=closed_port_endpoint, timeout_s=1.0, retry_for_s=0)
    exporter = OtelSpanExporter(config)
    before = EXPORT_ERRORS.labels("otlp")._value.get()
    exporter.export(make_record(), EVALUATIONS[:2])
    assert exporter.force_flush(5.0)  # given up at once (retry_for_s=0): nothing is held any more
    exporter.shutdown()
    assert EXPORT_ERRORS.labels("otlp")._value.get() == before + 2


@pytest.mark.parametrize("failure", [SinkMode.UNAVAILABLE, SinkMode.BLACKHOLE])
def test_a_flush_confirms_only_what_the_endpoint_accepted(failure: SinkMode) -> None:
    """Offsets move on a confirmed flush: while the endpoint fails, flushes say no and the spans stay
    held; once it answers, the next flush sends every one of them."""
    with OtlpSink(failure) as sink:
        exporter = OtelSpanExporter(OtelExportConfig(endpoint=sink.traces_url, timeout_s=1.0))
        before = EXPORT_ERRORS.labels("otlp")._value.get()
        exporter.export(make_record(), EVALUATIONS)
        assert not exporter.force_flush(5.0)
        assert not exporter.force_flush(5.0)
        sink.set_mode(SinkMode.OK)
        assert exporter.force_flush(10.0)
        exporter.shutdown()
        names = sorted(s.name for s in sink.spans)
        log_records = sink.log_records
    assert names == sorted(f"evaluation {e.metric}" for e in EVALUATIONS)
    assert log_records == len(EVALUATIONS)  # the log events were held and sent again too
    assert EXPORT_ERRORS.labels("otlp")._value.get() == before


def test_a_full_hold_drops_and_counts_new_spans() -> None:
    with OtlpSink(SinkMode.UNAVAILABLE) as sink:
        config = OtelExportConfig(endpoint=sink.traces_url, timeout_s=1.0, max_queue_size=2)
        exporter = OtelSpanExporter(config)
        before = EXPORT_ERRORS.labels("otlp")._value.get()
        exporter.export(make_record(), EVALUATIONS)
        assert EXPORT_ERRORS.labels("otlp")._value.get() == before + 1
        sink.set_mode(SinkMode.OK)
        assert exporter.force_flush(10.0)
        exporter.shutdown()
        assert len(sink.spans) == 2


def test_disabled_without_endpoint() -> None:
    exporter = OtelSpanExporter(OtelExportConfig())
    assert not exporter.enabled
    exporter.export(make_record(), EVALUATIONS)
    assert exporter.force_flush(1.0)
    exporter.shutdown()


def test_bad_ids_are_counted_not_raised(capture: tuple[Capture, str]) -> None:
    _, endpoint = capture
    exporter = OtelSpanExporter(OtelExportConfig(endpoint=endpoint))
    before = EXPORT_ERRORS.labels("otlp")._value.get()
    logs_before = EXPORT_ERRORS.labels("otlp_logs")._value.get()
    bad = RagRecord(trace_id="not-hex", anchor_span_id=ANCHOR_SPAN_ID, query="q", response="r")
    exporter.export(bad, EVALUATIONS[:1])
    exporter.shutdown()
    assert EXPORT_ERRORS.labels("otlp")._value.get() == before + 1
    assert EXPORT_ERRORS.labels("otlp_logs")._value.get() == logs_before + 1


def decoded(attributes: Iterable[KeyValue]) -> dict[str, object]:
    return {kv.key: getattr(kv.value, str(kv.value.WhichOneof("value"))) for kv in attributes}


def sink_log_records(sink: OtlpSink) -> list[tuple[dict[str, object], logs_pb2.LogRecord]]:
    """(resource attributes, record) of every log record the sink accepted."""
    records = []
    for path, body, _ in sink.bodies:
        if path == "/v1/logs":
            for resource_logs in ExportLogsServiceRequest.FromString(body).resource_logs:
                resource = decoded(resource_logs.resource.attributes)
                for scope in resource_logs.scope_logs:
                    records.extend((resource, record) for record in scope.log_records)
    return records


def test_each_result_is_a_log_event_parented_to_the_evaluated_span() -> None:
    """One `gen_ai.evaluation.result` log record per metric, at /v1/logs beside /v1/traces, in the
    evaluated span's trace and span, with the evaluation span's attributes."""
    with OtlpSink() as sink:
        exporter = OtelSpanExporter(OtelExportConfig(endpoint=sink.traces_url, max_explanation_chars=200))
        exporter.export(make_record(), EVALUATIONS)
        assert exporter.force_flush(10.0)
        exporter.shutdown()
        spans = {span.attributes["gen_ai.evaluation.name"]: span for span in sink.spans}
        records = sink_log_records(sink)

    assert len(records) == len(EVALUATIONS)
    errored: dict[str, object] = {}
    for resource, record in records:
        assert record.event_name == "gen_ai.evaluation.result"
        assert (record.trace_id.hex(), record.span_id.hex()) == (TRACE_ID, ANCHOR_SPAN_ID)
        assert record.severity_number == logs_pb2.SEVERITY_NUMBER_INFO
        assert resource["service.name"] == "ragpulse"
        attributes = decoded(record.attributes)
        assert attributes == spans[attributes["gen_ai.evaluation.name"]].attributes
        if attributes["gen_ai.evaluation.name"] == "contextual_relevancy":
            errored = attributes
    assert errored["gen_ai.evaluation.score.label"] == "error"
    assert errored["error.type"] == "evaluation_error"
    assert "gen_ai.evaluation.score.value" not in errored


def test_the_logs_endpoint_is_derived_or_set() -> None:
    assert OtelExportConfig(endpoint="http://tempo:4318/v1/traces").logs_url == "http://tempo:4318/v1/logs"
    assert OtelExportConfig(endpoint="https://h/api/otel/v1/traces/").logs_url == "https://h/api/otel/v1/logs"
    config = OtelExportConfig(endpoint="http://h:4318/traces", logs_endpoint="http://loki:4318/v1/logs")
    assert config.logs_url == "http://loki:4318/v1/logs"
    with pytest.raises(ValidationError, match=r"set otel_export\.logs_endpoint"):
        OtelExportConfig(endpoint="http://h:4318/traces")
    OtelExportConfig(endpoint="http://h:4318/traces", log_events=False)  # no log events: no logs URL


def test_log_events_off_sends_spans_only() -> None:
    with OtlpSink() as sink:
        exporter = OtelSpanExporter(OtelExportConfig(endpoint=sink.traces_url, log_events=False))
        exporter.export(make_record(), EVALUATIONS)
        assert exporter.force_flush(10.0)
        exporter.shutdown()
        assert len(sink.spans) == len(EVALUATIONS)
        assert sink.log_records == 0
        assert all(path == "/v1/traces" for path, _, _ in sink.bodies)


def test_a_backend_without_logs_refuses_them_once_and_the_spans_go_on() -> None:
    """A backend that takes traces but no logs (Jaeger, a Collector without a logs pipeline) answers
    404 for ever: the log events are dropped and counted at once, the flush confirms, offsets move."""
    with OtlpSink() as sink:
        config = OtelExportConfig(
            endpoint=sink.traces_url, logs_endpoint=f"http://127.0.0.1:{sink.port}/v1/nologs"
        )
        exporter = OtelSpanExporter(config)
        before = EXPORT_ERRORS.labels("otlp_logs")._value.get()
        exporter.export(make_record(), EVALUATIONS)
        assert exporter.force_flush(10.0)
        assert exporter.delivering
        exporter.shutdown()
        assert len(sink.spans) == len(EVALUATIONS)
    assert EXPORT_ERRORS.labels("otlp_logs")._value.get() == before + len(EVALUATIONS)
