"""Where human feedback comes from: spans, span events and a Kafka topic, read into `Feedback`.

The contract (docs/feedback.md): the attribute `ragpulse.feedback` (a score 0..1, or thumbs: up/down,
positive/negative, true/false, 1/0, 👍/👎) on any span, or on a span event of that name, with optional
`ragpulse.feedback.{trace_id,span_id,metric,comment}`; OpenInference human annotations
(`annotations.N.annotation.*` and its `evaluations`/`trace.` forms with `annotator_kind` HUMAN,
spec/annotations.md), whose post-hoc carrier span links to the answer; and topic records, ragpulse's
JSON or Phoenix span annotations (`{span_id, name, annotator_kind, result: {label, score}}`). Feedback
usually sits in a trace of its own, without RAG data: the pipeline reads every assembled trace here
before extraction. Nothing here raises: what cannot be read is counted with its reason.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kafka import KafkaConsumer

from collector.errors import ConfigError
from collector.feedback.agreement import Feedback, FeedbackConfig, FeedbackJoin, Unreadable, verdict
from collector.logs import RateLimitedLog
from collector.metrics import FEEDBACK_UNMATCHED
from collector.spans import Span
from collector.stages import DeadLetter, DeadLetterSink, Deliver
from ragpulse_sdk import attributes

if TYPE_CHECKING:
    from collector.receivers.kafka import KafkaConfig

logger = logging.getLogger(__name__)

FEEDBACK, TRACE_ID, SPAN_ID = attributes.FEEDBACK, attributes.FEEDBACK_TRACE_ID, attributes.FEEDBACK_SPAN_ID
METRIC, COMMENT = attributes.FEEDBACK_METRIC, attributes.FEEDBACK_COMMENT

_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAN_ID = re.compile(r"[0-9a-f]{16}")
_ANNOTATION = re.compile(r"(trace\.)?(annotations|evaluations)\.(\d+)\.(?:annotation|evaluation)\.(\w+)")
_ANNOTATION_PREFIXES = ("annotations.", "evaluations.", "trace.annotations.", "trace.evaluations.")


def _id(value: Any, pattern: re.Pattern[str]) -> str:
    text = value.strip().lower() if isinstance(value, str) else ""
    if not pattern.fullmatch(text) or not text.strip("0"):
        raise Unreadable("invalid_id")
    return text


def _metric(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


# --- spans ------------------------------------------------------------------------------------------
class SpanFeedback:
    """Reads feedback from every span of an assembled trace into the join (on the pipeline's loop)."""

    def __init__(self, join: FeedbackJoin) -> None:
        self.join = join
        self._error_log = RateLimitedLog(interval_s=60.0)

    def read(self, spans: Sequence[Span]) -> None:
        """Never raises: a span whose feedback cannot be read costs that feedback only."""
        for span in spans:
            try:
                self._span(span)
            except Exception as exc:  # a bug must never reject the trace it rode in
                self._error_log.log(logger, exc, "feedback of span %s unreadable (%s)", span.span_id, exc)
                self.join.invalid("span", "invalid_record")
        self.join.expire()

    def _span(self, span: Span) -> None:
        """Every span is looked at, so only its keys and event names are read until one names feedback:
        a span's values are converted only where there is feedback (most traces are dropped unread)."""
        keys = span.attribute_keys()
        if FEEDBACK in keys:
            self._keys(span, span.attributes, "span")
        if FEEDBACK in span.event_names():
            for event in span.events:
                if event.name == FEEDBACK:
                    self._keys(span, event.attributes, "event")
        if any(key.startswith(_ANNOTATION_PREFIXES) for key in keys):
            for annotation in _annotations(span.attributes):
                self._annotation(span, annotation)

    def _keys(self, span: Span, attributes: Mapping[str, Any], source: str) -> None:
        try:
            trace_id, span_id = _target(span, attributes.get(TRACE_ID), attributes.get(SPAN_ID))
            positive = verdict(attributes.get(FEEDBACK), self.join.config.positive_at)
        except Unreadable as bad:
            self.join.invalid(source, bad.reason)
            return
        self.join.add(Feedback(source, trace_id, span_id, positive, _metric(attributes.get(METRIC))))

    def _annotation(self, span: Span, fields: dict[str, Any]) -> None:
        if fields.get("annotator_kind") != "HUMAN":
            return  # an LLM's or code's evaluation (ragpulse's own among them) is no human feedback
        source = "span"
        try:
            trace_id, span_id = _target(span, None, None)
            positive = _label_or_score(fields, self.join.config.positive_at)
        except Unreadable as bad:
            self.join.invalid(source, bad.reason)
            return
        if fields.get("scope") == "trace":
            span_id = None
        self.join.add(Feedback(source, trace_id, span_id, positive, _metric(fields.get("name")), False))


def _target(span: Span, trace_id: Any, span_id: Any) -> tuple[str, str | None]:
    """The answer the feedback is about: explicit ids, else the span's link (a post-hoc carrier), else the
    span itself (its span id only narrows to an answer when it is that answer's anchor)."""
    if trace_id is not None:
        return _id(trace_id, _TRACE_ID), None if span_id is None else _id(span_id, _SPAN_ID)
    link = span.raw.links[0] if span.raw.links else None
    if link is not None and link.trace_id:
        return link.trace_id.hex(), (_id(span_id, _SPAN_ID) if span_id is not None else link.span_id.hex())
    return span.trace_id, span.span_id if span_id is None else _id(span_id, _SPAN_ID)


def _annotations(attributes: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """OpenInference's flattened annotation objects, one dict of fields each (scope: span or trace)."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _ANNOTATION.fullmatch(key)
        if match:
            scope, form, index, name = match.groups()
            fields = found.setdefault((scope or "", form, index), {"scope": "trace" if scope else "span"})
            fields[name] = value
    yield from found.values()


def _label_or_score(fields: Mapping[str, Any], positive_at: float) -> bool:
    """A known label word first (scores' direction depends on the annotation), else a 0..1 score."""
    label, score = fields.get("label"), fields.get("score")
    if label is not None:
        try:
            return verdict(label, positive_at)
        except Unreadable:
            if score is None:
                raise
    return verdict(score, positive_at)


# --- topic records ----------------------------------------------------------------------------------
def parse_record(payload: bytes, positive_at: float = 0.5) -> list[Feedback | Unreadable]:
    """One topic record: ragpulse's JSON, a Phoenix annotation, a list of either, or Phoenix's
    `{"data": [...]}` request body. Each item is feedback or the reason it is not."""
    try:
        document = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return [Unreadable("invalid_record")]
    if isinstance(document, dict) and isinstance(document.get("data"), list):
        document = document["data"]
    items = document if isinstance(document, list) else [document]
    out: list[Feedback | Unreadable] = []
    for item in items:
        try:
            out.append(_item(item, positive_at))
        except Unreadable as bad:
            out.append(bad)
    return out


def _item(item: Any, positive_at: float) -> Feedback:
    if not isinstance(item, dict):
        raise Unreadable("invalid_record")
    trace_id = _id(item["trace_id"], _TRACE_ID) if item.get("trace_id") is not None else None
    span_id = _id(item["span_id"], _SPAN_ID) if item.get("span_id") is not None else None
    if "annotator_kind" in item or "result" in item:  # a Phoenix span annotation
        if item.get("annotator_kind") != "HUMAN":
            raise Unreadable("not_human")
        if span_id is None and trace_id is None:
            raise Unreadable("invalid_id")
        result = item.get("result")
        positive = _label_or_score(result if isinstance(result, dict) else {}, positive_at)
        return Feedback("kafka", trace_id, span_id, positive, _metric(item.get("name")), False)
    if trace_id is None:
        raise Unreadable("invalid_id")
    key = next((k for k in ("thumbs", "label", "score", "feedback") if item.get(k) is not None), None)
    if key is None:
        raise Unreadable("invalid_value")
    return Feedback("kafka", trace_id, span_id, verdict(item[key], positive_at), _metric(item.get("metric")))


class FeedbackTopicReceiver:
    """Consumes the feedback topic on its own thread and commits after each batch is read into the join.

    An optional input: it never holds back /readyz, and a broker that cannot be reached is retried."""

    name = "feedback"

    def __init__(
        self,
        join: FeedbackJoin,
        topic: str,
        bootstrap_servers: str,
        group_id: str,
        dead_letters: DeadLetterSink,
        options: Mapping[str, Any],
    ) -> None:
        self.join, self.topic = join, topic
        self._bootstrap, self._group_id = bootstrap_servers, group_id
        self._dead_letters, self._options = dead_letters, dict(options)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error_log = RateLimitedLog(interval_s=60.0)

    @property
    def ready(self) -> bool:
        return True

    @property
    def alive(self) -> bool:
        return self._thread is None or self._thread.is_alive() or self._stop.is_set()

    def start(self, deliver: Deliver) -> None:
        """`deliver` is unused: feedback goes to the join, not through the span pipeline."""
        self._thread = threading.Thread(target=self._run, name="feedback-receiver", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        consumer = None
        while consumer is None and not self._stop.is_set():
            try:
                consumer = KafkaConsumer(
                    self.topic,
                    bootstrap_servers=self._bootstrap,
                    group_id=self._group_id,
                    enable_auto_commit=False,
                    **self._options,
                )
            except Exception as exc:  # no broker yet: feedback waits, evaluation goes on
                self._error_log.log(logger, exc, "feedback topic %s unreachable (%s)", self.topic, exc)
                self._stop.wait(2.0)
        if consumer is None:
            return
        try:
            while not self._stop.is_set():
                self._poll(consumer)
        finally:
            consumer.close(autocommit=False)

    def _poll(self, consumer: KafkaConsumer) -> None:
        try:
            batches = consumer.poll(timeout_ms=200, max_records=500)
            for records in batches.values():
                for record in records:
                    self._handle(record)
            if batches:
                consumer.commit()
        except Exception as exc:  # a poll or a commit failed: read again from the last commit
            self._error_log.log(logger, exc, "feedback topic %s: %s", self.topic, exc)
            self._stop.wait(1.0)
        self.join.expire()

    def _handle(self, record: Any) -> None:
        """Feedback to the join; a record with unreadable items is counted and set aside once."""
        reasons = []
        for item in parse_record(record.value or b"", self.join.config.positive_at):
            if isinstance(item, Feedback):
                self.join.add(item)
            elif item.reason == "not_human":  # an LLM's annotation on the topic: not feedback, not an error
                FEEDBACK_UNMATCHED.labels("not_human").inc()
            else:
                self.join.invalid("kafka", item.reason)
                reasons.append(item.reason)
        if reasons:
            detail = f"unreadable feedback: {', '.join(sorted(set(reasons)))}"
            letter = DeadLetter(reasons[0], detail, record.value or b"", record.key, "feedback")
            try:
                self._dead_letters.write(letter, on_written=lambda: None)
            except Exception as exc:
                self._error_log.log(logger, exc, "dead letter of feedback failed (%s)", exc)

    def stop(self) -> None:
        self._stop.set()

    def shutdown(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)


def topic_receiver(
    config: FeedbackConfig, kafka: KafkaConfig, join: FeedbackJoin, dead_letters: DeadLetterSink
) -> FeedbackTopicReceiver | None:
    """The feedback topic's consumer, by the sidecar's Kafka settings, when `feedback.kafka_topic` is set."""
    if not config.kafka_topic:
        return None
    bootstrap = config.bootstrap_servers or kafka.bootstrap_servers
    if not bootstrap:
        raise ConfigError("feedback.kafka_topic needs feedback.bootstrap_servers or kafka.bootstrap_servers")
    group_id = config.group_id or f"{kafka.group_id}-feedback"
    options = {"auto_offset_reset": kafka.auto_offset_reset, **kafka.options}
    return FeedbackTopicReceiver(join, config.kafka_topic, bootstrap, group_id, dead_letters, options)
