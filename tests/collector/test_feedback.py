"""Human feedback in (span attributes, span events, OpenInference annotations, a Kafka topic), judge-human
agreement out: the join on its own, then a real `ragpulse run` fed by the OTel SDK's OTLP exporter and by
a real Kafka broker."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.structs import TopicPartition
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import Link, Tracer

from collector.commands.demo_corpus import TOPICS
from collector.conventions import extract
from collector.feedback.agreement import Feedback, FeedbackConfig, FeedbackJoin, Unreadable, verdict
from collector.feedback.sources import SpanFeedback, parse_record
from collector.metrics import REGISTRY
from collector.receivers.decode import decode
from collector.records import RagRecord
from collector.spans import flatten
from collector.stages import Evaluation, Outcome
from ragpulse_sdk import record_feedback, record_rag
from testkit.process import RagpulseProcess
from testkit.rag_traces import Collect, encode, topic_attributes
from testkit.scrape import Scrape, scrape
from tests.ops.prom_stack import wait_until

GOOD_TOPICS = TOPICS[:3]  # the offline judge passes their grounded answers and fails the invented ones


# --- values ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "positive"),
    [
        ("up", True), ("Thumbs-Up", True), ("positive", True), (True, True), (1, True), ("1", True),
        ("👍", True), ("👍🏽", True), (0.8, True), (0.5, True),
        ("down", False), ("negative", False), (False, False), (0, False), ("0", False), ("👎", False),
        (0.2, False), ("0.1", False),
    ],
)  # fmt: skip
def test_thumbs_and_scores_read_as_a_verdict(value: Any, positive: bool) -> None:
    assert verdict(value) is positive


@pytest.mark.parametrize("value", ["meh", "", 7, -0.1, math.nan, math.inf, None, [1], {"a": 1}, b"up"])
def test_anything_else_is_invalid(value: Any) -> None:
    with pytest.raises(Unreadable) as raised:
        verdict(value)
    assert raised.value.reason == "invalid_value"


# --- the join ----------------------------------------------------------------------------------
def _value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@dataclass
class Counts:
    """Deltas of the module-level feedback metrics since it was made (they are process-wide)."""

    start: dict[tuple[str, tuple[tuple[str, str], ...]], float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.start = self._now()

    @staticmethod
    def _now() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        out = {}
        for family in REGISTRY.collect():
            if "feedback" in family.name or "agreement" in family.name:
                for sample in family.samples:
                    out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        return out

    def __call__(self, name: str, **labels: str) -> float:
        now = self._now()
        return sum(
            value - self.start.get(key, 0.0)
            for key, value in now.items()
            if key[0] == name and labels.items() <= dict(key[1]).items()
        )


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _record(trace: int, anchor: int = 1) -> RagRecord:
    return RagRecord(f"{trace:032x}", f"{anchor:016x}", "q", "a", service="shop")


def _evaluation(metric: str, outcome: Outcome, score: float | None) -> Evaluation:
    return Evaluation(metric, outcome, score, "", 0.5, False, "offline", "m")


PASSED = _evaluation("faithfulness", Outcome.PASSED, 0.9)
FAILED = _evaluation("faithfulness", Outcome.FAILED, 0.2)
RELEVANT = _evaluation("answer_relevancy", Outcome.PASSED, 0.8)


def _feedback(trace: int, positive: bool, **fields: Any) -> Feedback:
    return Feedback(
        fields.pop("source", "span"), f"{trace:032x}", fields.pop("span_id", None), positive, **fields
    )


def test_feedback_after_the_evaluation_fills_the_confusion_matrix() -> None:
    counts, join = Counts(), FeedbackJoin()
    join.exporter.export(_record(1), [PASSED, RELEVANT])
    join.exporter.export(_record(2), [FAILED])
    join.add(_feedback(1, True))  # the answer as a whole: both metrics
    join.add(_feedback(2, True, metric="faithfulness"))
    assert (
        counts(
            "ragpulse_judge_human_agreement_total", metric="faithfulness", judge="passed", human="positive"
        )
        == 1
    )
    assert counts("ragpulse_judge_human_agreement_total", metric="answer_relevancy", judge="passed") == 1
    assert (
        counts(
            "ragpulse_judge_human_agreement_total", metric="faithfulness", judge="failed", human="positive"
        )
        == 1
    )
    assert counts("ragpulse_feedback_total", source="span", sentiment="positive") == 2
    assert counts(
        "ragpulse_feedback_judge_score_sum", metric="faithfulness", human="positive"
    ) == pytest.approx(1.1)
    assert join.pending == 0


def test_feedback_before_the_evaluation_waits_for_it_then_expires() -> None:
    clock = Clock()
    counts, join = Counts(), FeedbackJoin(FeedbackConfig(match_window_s=60), clock)
    join.add(_feedback(3, False))
    join.add(_feedback(4, False))
    assert join.pending == 2
    join.exporter.export(_record(3), [FAILED])
    assert counts("ragpulse_judge_human_agreement_total", judge="failed", human="negative") == 1
    clock.now += 61
    join.expire()
    assert (join.pending, counts("ragpulse_feedback_unmatched_total", reason="expired")) == (0, 1)
    join.exporter.export(_record(4), [FAILED])  # too late: nothing is counted twice or resurrected
    assert counts("ragpulse_judge_human_agreement_total") == 1


def test_what_cannot_be_compared_is_counted_with_its_reason() -> None:
    counts, join = Counts(), FeedbackJoin(FeedbackConfig(max_pending=2))
    join.exporter.export(_record(5), [PASSED, _evaluation("hallucination", Outcome.ERROR, None)])
    join.add(_feedback(5, True, metric="context_recall"))  # named, not evaluated on that trace
    join.add(_feedback(5, True, metric="hallucination"))  # the judge had no verdict
    join.add(_feedback(5, True, metric="user_rating", strict_metric=False))  # a hint: the whole answer
    for trace in (6, 7, 8):
        join.add(_feedback(trace, True))
    assert counts("ragpulse_feedback_unmatched_total", reason="no_evaluation") == 1
    assert counts("ragpulse_feedback_unmatched_total", reason="no_verdict") == 1
    assert counts("ragpulse_feedback_unmatched_total", reason="pending_full") == 1
    assert counts("ragpulse_judge_human_agreement_total", metric="faithfulness") == 1
    assert join.pending == 2


def test_a_span_id_narrows_to_one_answer_of_the_trace_and_a_phoenix_span_alone_finds_its_trace() -> None:
    counts, join = Counts(), FeedbackJoin()
    join.exporter.export(_record(9, anchor=1), [PASSED])
    join.exporter.export(_record(9, anchor=2), [FAILED])
    join.add(_feedback(9, False, span_id=f"{2:016x}"))
    join.add(Feedback("kafka", None, f"{1:016x}", True, "correctness", strict_metric=False))
    assert counts("ragpulse_judge_human_agreement_total", judge="failed", human="negative") == 1
    assert counts("ragpulse_judge_human_agreement_total", judge="passed", human="positive") == 1
    assert counts("ragpulse_judge_human_agreement_total") == 2


def test_the_index_of_evaluations_is_bounded() -> None:
    join = FeedbackJoin(FeedbackConfig(max_traces=3))
    for trace in range(10, 20):
        join.exporter.export(_record(trace, anchor=trace), [PASSED])
    counts = Counts()
    join.add(_feedback(10, True))  # forgotten: waits like feedback that came first
    join.add(_feedback(19, True))
    assert (join.pending, counts("ragpulse_judge_human_agreement_total")) == (1, 1)


# --- spans, read as the sidecar reads them ----------------------------------------------------------
def _spans(build: Callable[[Tracer], None]) -> list[Any]:
    collect = Collect()
    provider = TracerProvider(resource=Resource.create({"service.name": "rag-app"}))
    provider.add_span_processor(SimpleSpanProcessor(collect))
    build(provider.get_tracer("app"))
    return flatten(decode(encode(collect.spans)))


def _answer(tracer: Tracer, grounded: bool = True, topic: int = 0) -> tuple[str, str]:
    """A RAG answer on one span (ragpulse's own attributes): its trace and span id."""
    with tracer.start_as_current_span("answer") as span:
        span.set_attributes(topic_attributes(GOOD_TOPICS[topic % len(GOOD_TOPICS)], grounded))
        context = span.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


class RecordingJoin(FeedbackJoin):
    """Keeps what the spans gave, to compare it whole."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[Feedback] = []

    def add(self, feedback: Feedback) -> None:
        self.read.append(feedback)


def test_attribute_event_and_openinference_annotation_forms() -> None:
    target: dict[str, Any] = {}

    def build(tracer: Tracer) -> None:
        with tracer.start_as_current_span("answer") as answer:
            answer.add_event(
                "ragpulse.feedback", {"ragpulse.feedback": "👎", "ragpulse.feedback.comment": "x"}
            )
            target["context"] = answer.get_span_context()
        with tracer.start_as_current_span("feedback") as later:
            later.set_attributes(
                {
                    "ragpulse.feedback": 0.9,
                    "ragpulse.feedback.trace_id": f"{target['context'].trace_id:032x}",
                    "ragpulse.feedback.metric": "faithfulness",
                }
            )
        # OpenInference's post-hoc carrier: a span linked to the answer, with flattened annotations.
        with tracer.start_as_current_span("review", links=[Link(target["context"])]) as carrier:
            carrier.set_attributes(
                {
                    "openinference.span.kind": "EVALUATOR",
                    "annotations.0.annotation.name": "correctness",
                    "annotations.0.annotation.label": "thumbs-up",
                    "annotations.0.annotation.annotator_kind": "HUMAN",
                    "evaluations.0.evaluation.name": "hallucination",
                    "evaluations.0.evaluation.score": 1,
                    "evaluations.0.evaluation.annotator_kind": "LLM",  # a model's: not human feedback
                }
            )

    join = RecordingJoin()
    SpanFeedback(join).read(_spans(build))
    read = join.read
    trace_id, span_id = f"{target['context'].trace_id:032x}", f"{target['context'].span_id:016x}"
    assert read == [
        Feedback("event", trace_id, span_id, False),
        Feedback("span", trace_id, None, True, "faithfulness"),
        Feedback("span", trace_id, span_id, True, "correctness", strict_metric=False),
    ]


def test_malformed_feedback_on_spans_is_counted_never_raised() -> None:
    def build(tracer: Tracer) -> None:
        with tracer.start_as_current_span("f1") as span:
            span.set_attribute("ragpulse.feedback", "meh")
        with tracer.start_as_current_span("f2") as span:
            span.set_attributes({"ragpulse.feedback": "up", "ragpulse.feedback.trace_id": "not-a-trace"})
        with tracer.start_as_current_span("f3") as span:
            span.set_attributes({"ragpulse.feedback": [1, 2], "ragpulse.feedback.span_id": 12})
        with tracer.start_as_current_span("f4") as span:
            span.add_event("ragpulse.feedback", {"ragpulse.feedback": 42.0})
            span.set_attributes({"annotations.0.annotation.annotator_kind": "HUMAN", "annotations.x.y": "z"})

    counts = Counts()
    SpanFeedback(FeedbackJoin()).read(_spans(build))
    assert counts("ragpulse_feedback_total", sentiment="invalid") == 5
    assert counts("ragpulse_feedback_unmatched_total", reason="invalid_value") == 3  # meh, 42, no result
    assert counts("ragpulse_feedback_unmatched_total", reason="invalid_id") == 2


def test_topic_records_ragpulse_and_phoenix_shapes() -> None:
    trace, span = "ab" * 16, "cd" * 8
    assert parse_record(
        json.dumps({"trace_id": trace, "thumbs": "down", "metric": "faithfulness"}).encode()
    ) == [Feedback("kafka", trace, None, False, "faithfulness")]
    phoenix = {"span_id": span, "name": "user_feedback", "annotator_kind": "HUMAN", "result": {"score": 1.0}}
    llm = {**phoenix, "annotator_kind": "LLM"}
    items = parse_record(json.dumps({"data": [phoenix, llm]}).encode())
    assert items[0] == Feedback("kafka", None, span, True, "user_feedback", strict_metric=False)
    assert isinstance(items[1], Unreadable) and items[1].reason == "not_human"
    for payload, reason in (
        (b"\xff\xfe", "invalid_record"),
        (b"[1]", "invalid_record"),
        (json.dumps({"thumbs": "up"}).encode(), "invalid_id"),
        (json.dumps({"trace_id": trace}).encode(), "invalid_value"),
        (json.dumps({"trace_id": "0" * 32, "score": 1}).encode(), "invalid_id"),
        (json.dumps({"trace_id": trace, "score": "5 stars"}).encode(), "invalid_value"),
    ):
        (item,) = parse_record(payload)
        assert isinstance(item, Unreadable) and item.reason == reason, payload


# --- a real sidecar -------------------------------------------------------------------------------
SIDECAR_ENV = {"RAGPULSE_SAMPLING__METRICS": '["faithfulness"]', "RAGPULSE_SAMPLING__REFERENCE_METRICS": "[]"}


@pytest.fixture
def app() -> Iterator[Callable[[int], tuple[TracerProvider, Tracer]]]:
    providers: list[TracerProvider] = []

    def make(otlp_port: int) -> tuple[TracerProvider, Tracer]:
        provider = TracerProvider(resource=Resource.create({"service.name": "shop", "service.version": "1"}))
        exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{otlp_port}/v1/traces")
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=100))
        providers.append(provider)
        return provider, provider.get_tracer("shop")

    yield make
    for provider in providers:
        provider.shutdown()


def _agreement(metrics: Scrape) -> dict[tuple[str, str], float]:
    return {
        (judge, human): metrics.value(
            "ragpulse_judge_human_agreement_total", metric="faithfulness", judge=judge, human=human
        )
        for judge in ("passed", "failed")
        for human in ("positive", "negative")
    }


def _evaluated(ragpulse: RagpulseProcess, count: int) -> bool:
    return scrape(ragpulse.metrics_port).value("ragpulse_evaluations_total", metric="faithfulness") >= count


def test_ragpulse_run_joins_later_feedback_spans_and_an_inline_event(app: Callable[..., Any]) -> None:
    with RagpulseProcess("--quiet-period", "0.3", env=SIDECAR_ENV) as ragpulse:
        provider, tracer = app(ragpulse.otlp_port)
        # An inline thumbs-up event on the answer span: read before its evaluation exists (it waits).
        topic = GOOD_TOPICS[0]
        with tracer.start_as_current_span("answer") as span:
            span.set_attributes(topic_attributes(topic))
            span.add_event("ragpulse.feedback", {"ragpulse.feedback": "👍"})
        good = [_answer(tracer, grounded=True, topic=i)[0] for i in (1, 2)]
        bad = [_answer(tracer, grounded=False, topic=i)[0] for i in (0, 1, 2)]
        provider.force_flush()
        wait_until(lambda: _evaluated(ragpulse, 6), 120, "six faithfulness evaluations")

        # Later, in traces of their own, pointing at the answers.
        later: list[tuple[str, Any, dict[str, str]]] = [
            (good[0], "up", {}),
            (good[1], "negative", {"ragpulse.feedback.metric": "faithfulness"}),
            (bad[0], "down", {}),
            (bad[1], 0.2, {"ragpulse.feedback.comment": "it made up the year"}),
            (bad[2], True, {}),  # the user liked an invented answer: judge and human disagree
            (bad[0], "up", {"ragpulse.feedback.metric": "answer_relevancy"}),  # not evaluated on it
            (bad[0], "meh", {}),  # malformed: counted, never a crash
            ("not-a-trace-id", "up", {}),
        ]
        for trace_id, value, extra in later:
            with tracer.start_as_current_span("feedback") as span:
                span.set_attributes(
                    {"ragpulse.feedback": value, "ragpulse.feedback.trace_id": trace_id, **extra}
                )
        provider.force_flush()
        expected = {("passed", "positive"): 2, ("passed", "negative"): 1, ("failed", "negative"): 2,
                    ("failed", "positive"): 1}  # fmt: skip
        metrics = wait_until(
            lambda: (
                (m := scrape(ragpulse.metrics_port))
                and _agreement(m) == expected
                and m.value("ragpulse_feedback_unmatched_total") >= 3
                and m
            ),
            60,
            f"the confusion matrix {expected}",
        )
        assert metrics.value("ragpulse_feedback_total", source="event", sentiment="positive") == 1
        assert metrics.by_label("ragpulse_feedback_total", "sentiment") == {
            "positive": 4,
            "negative": 3,
            "invalid": 2,
        }
        unmatched = metrics.by_label("ragpulse_feedback_unmatched_total", "reason")
        assert unmatched == {"no_evaluation": 1, "invalid_value": 1, "invalid_id": 1}
        assert metrics.value("ragpulse_feedback_judge_score_count", metric="faithfulness") == 6
        assert metrics.value("ragpulse_dead_letters_total") == 0  # feedback traces are not errors
        assert ragpulse.process is not None and ragpulse.process.poll() is None
        assert "Traceback" not in ragpulse.output()


def _committed(bootstrap: str, group: str, topic: str) -> int:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return consumer.committed(TopicPartition(topic, 0)) or 0
    finally:
        consumer.close()


def test_ragpulse_run_reads_the_feedback_topic(
    app: Callable[..., Any], kafka_bootstrap: str, topic: str
) -> None:
    group = f"feedback-{uuid.uuid4().hex[:8]}"
    env = {
        **SIDECAR_ENV,
        "RAGPULSE_FEEDBACK__KAFKA_TOPIC": topic,
        "RAGPULSE_FEEDBACK__BOOTSTRAP_SERVERS": kafka_bootstrap,
        "RAGPULSE_FEEDBACK__GROUP_ID": group,
    }
    with RagpulseProcess("--quiet-period", "0.3", env=env) as ragpulse:
        provider, tracer = app(ragpulse.otlp_port)
        good, _ = _answer(tracer, grounded=True, topic=0)
        bad, bad_span = _answer(tracer, grounded=False, topic=1)
        provider.force_flush()
        wait_until(lambda: _evaluated(ragpulse, 2), 120, "two faithfulness evaluations")

        phoenix = {"span_id": bad_span, "name": "user_feedback", "annotator_kind": "HUMAN",
                   "result": {"label": "thumbs-down", "score": 0.0}}  # fmt: skip
        records = [
            {"trace_id": good, "thumbs": "up"},
            {"trace_id": bad, "score": 0.1, "metric": "faithfulness", "comment": "wrong year"},
            {"data": [phoenix, {**phoenix, "annotator_kind": "LLM"}]},
            {"trace_id": "nothex", "thumbs": "up"},
        ]
        producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
        for record in records:
            producer.send(topic, json.dumps(record).encode())
        producer.send(topic, b"\xff not json")
        producer.flush()
        producer.close()

        expected = {("passed", "positive"): 1, ("passed", "negative"): 0, ("failed", "negative"): 2,
                    ("failed", "positive"): 0}  # fmt: skip
        metrics = wait_until(
            lambda: (
                (m := scrape(ragpulse.metrics_port))
                and _agreement(m) == expected
                and m.value("ragpulse_feedback_total", source="kafka", sentiment="invalid") == 2
                and m
            ),
            60,
            f"the confusion matrix {expected} from the topic",
        )
        assert metrics.value("ragpulse_feedback_unmatched_total", reason="not_human") == 1
        assert metrics.by_label("ragpulse_dead_letters_total", "reason") == {
            "invalid_id": 1,
            "invalid_record": 1,
        }
        wait_until(
            lambda: _committed(kafka_bootstrap, group, topic) == 5, 30, "offsets committed past the records"
        )
        assert "Traceback" not in ragpulse.output()


def test_the_sdk_helpers_write_what_the_sidecar_reads() -> None:
    """`record_rag(..., prompt_version=)` and `record_feedback(..., answer=)` from the app's side."""
    target: dict[str, Any] = {}

    def build(tracer: Tracer) -> None:
        with tracer.start_as_current_span("answer") as answer:
            record_rag(answer, "Who?", ["Ada wrote it."], "Ada wrote it.", prompt_version="p7")
            target["context"] = answer.get_span_context()
        with tracer.start_as_current_span("thumbs") as later:  # another request, another trace
            record_feedback(later, "down", answer=target["context"], metric="faithfulness", comment="no")

    spans = _spans(build)
    join = RecordingJoin()
    SpanFeedback(join).read(spans)
    trace_id, span_id = f"{target['context'].trace_id:032x}", f"{target['context'].span_id:016x}"
    assert join.read == [Feedback("span", trace_id, span_id, False, "faithfulness")]
    (record,) = extract(trace_id, [s for s in spans if s.trace_id == trace_id])
    assert record.prompt_version == "p7"
