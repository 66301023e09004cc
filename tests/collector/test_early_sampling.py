"""Sampling on the trace id before a trace is read: a trace no record of which can be sampled is released
unread and counted, and everything that needs every trace still sees it (feedback, conversations,
--log-records). Driven in-process: traces go through `Pipeline._close_traces`, as the loop closes them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import collector.pipeline.pipeline as pipeline_module
from collector.assembly.assembler import AssemblyConfig, TraceAssembler
from collector.conventions import read
from collector.feedback.agreement import FeedbackJoin
from collector.feedback.sources import SpanFeedback
from collector.metrics import SAMPLING_DECISIONS, TRACES
from collector.pipeline.deadletter import LogDeadLetters
from collector.pipeline.pipeline import Pipeline
from collector.receivers.decode import decode
from collector.sampling.sampler import Sampler, SamplingConfig, SamplingRule, ratio_sampled, trace_key
from collector.spans import Span, flatten
from testkit.rag_traces import RagCase, encode, make_spans
from tests.collector.test_assemble import CountingAck


class Judge:
    """Never called here: traces are closed without the loop's workers running."""

    ready = True


def traces(count: int, convention: str = "ragpulse", **case: Any) -> list[list[Span]]:
    """`count` traces, each with its own random trace id, spans decoded as a receiver decodes them."""
    out = []
    for _ in range(count):
        spans = flatten(decode(encode(make_spans(convention, RagCase(**case)))))
        out.append(spans)
    return out


def close(pipeline: Pipeline, batch: list[list[Span]]) -> list[CountingAck]:
    """Assemble each trace with its own ack, close them all, return the acks (after the hand-over)."""
    assembler = TraceAssembler(AssemblyConfig(quiet_period_s=0.0))
    acks = []
    for spans in batch:
        ack = CountingAck()
        assembler.add(spans, ack, 0.0)
        ack.release()  # the receiver's own hold, as `Pipeline._ingest` releases it
        acks.append(ack)
    pipeline._close_traces(assembler.drain())
    return acks


def make_pipeline(config: SamplingConfig, **kwargs: Any) -> Pipeline:
    return Pipeline(
        receivers=[],
        assembler=TraceAssembler(),
        dead_letters=LogDeadLetters(),
        sampler=Sampler(config),
        evaluator=Judge(),  # type: ignore[arg-type]
        **kwargs,
    )


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The trace ids extraction was asked to read."""
    seen: list[str] = []

    def spy(trace_id: str, spans: Sequence[Span], config: Any = None) -> Any:
        seen.append(trace_id)
        return read(trace_id, spans, config) if config is not None else read(trace_id, spans)

    monkeypatch.setattr(pipeline_module, "read", spy)
    return seen


def counter(metric: Any, label: str) -> float:
    return metric.labels(label)._value.get()


def queued(pipeline: Pipeline) -> list[str]:
    """The trace ids of the records queued for the judge (taken off the queue)."""
    jobs = pipeline._queue._queue
    return sorted(jobs.get_nowait().record.trace_id for _ in range(jobs.qsize()))


def kept(trace_ids: Sequence[str], rate: float) -> set[str]:
    return {t for t in trace_ids if ratio_sampled(trace_key(t), rate)}


def test_unsampled_traces_are_released_counted_and_never_read(reads: list[str]) -> None:
    batch = traces(60)
    ids = [spans[0].trace_id for spans in batch]
    pipeline = make_pipeline(SamplingConfig(rate=0.3))
    before = counter(TRACES, "not_sampled"), counter(SAMPLING_DECISIONS, "not_sampled")
    acks = close(pipeline, batch)

    sampled = kept(ids, 0.3)
    assert 0 < len(sampled) < len(ids)
    assert set(reads) == sampled  # extraction never ran for a dropped trace
    dropped = len(ids) - len(sampled)
    assert counter(TRACES, "not_sampled") - before[0] == dropped
    assert counter(SAMPLING_DECISIONS, "not_sampled") - before[1] == dropped
    unsampled_acks = [ack for ack, trace_id in zip(acks, ids, strict=True) if trace_id not in sampled]
    assert all(ack.holds == 0 for ack in unsampled_acks)  # released: a Kafka offset may commit
    assert queued(pipeline) == sorted(sampled)
    unread = [span for spans in batch if spans[0].trace_id not in sampled for span in spans]
    assert all(span._lazy == (True, True) for span in unread)  # not even their attributes converted


def test_a_span_converts_its_attributes_and_events_when_first_read() -> None:
    span = traces(1)[0][0]
    raw_keys = [kv.key for kv in span.raw.attributes]
    assert list(span.attribute_keys()) == raw_keys and span._lazy == (True, True)
    assert span.events == [] and span._lazy == (False, False)
    assert list(span.attributes) == raw_keys == list(span.attribute_keys())
    twin = Span(
        span.trace_id, span.span_id, span.parent_span_id, span.name, span.start_ns, span.end_ns, None,
        span.resource, span.raw, span.raw_resource,
    )  # fmt: skip
    assert twin == span and twin._lazy == (False, False)  # compared by value, converted to compare


def test_the_same_records_are_judged_with_and_without_the_early_decision(reads: list[str]) -> None:
    batch = traces(40) + traces(40, "openinference") + traces(10, route="/checkout")
    rules = [SamplingRule(route="/checkout*", rate=1.0), SamplingRule(model="gpt-4*", rate=0.5)]
    early = make_pipeline(SamplingConfig(rate=0.2, rules=rules))
    late = make_pipeline(SamplingConfig(rate=0.2, rules=rules, early=False))
    close(early, batch)
    close(late, batch)
    judged = queued(early)
    assert judged == queued(late)
    assert 10 < len(judged) < len(batch)


def test_a_rule_on_the_route_reads_only_the_traces_it_may_match(reads: list[str]) -> None:
    checkout, other = traces(10, route="/checkout/pay"), traces(30, route="/ask")
    pipeline = make_pipeline(SamplingConfig(rate=0.0, rules=[SamplingRule(route="/checkout*", rate=1.0)]))
    close(pipeline, checkout + other)
    checkout_ids = sorted(spans[0].trace_id for spans in checkout)
    assert sorted(reads) == checkout_ids  # the other routes' traces are dropped unread
    assert queued(pipeline) == checkout_ids


def test_a_rule_on_the_service_reads_only_that_service(reads: list[str]) -> None:
    mine = flatten(decode(encode(make_spans("ragpulse", service="checkout-api"))))
    others = traces(10)
    pipeline = make_pipeline(SamplingConfig(rate=0.0, rules=[SamplingRule(service="checkout-*", rate=1.0)]))
    close(pipeline, [mine, *others])
    assert reads == [mine[0].trace_id]
    assert queued(pipeline) == [mine[0].trace_id]


def test_a_rule_on_what_only_extraction_knows_keeps_every_trace_it_may_sample(reads: list[str]) -> None:
    batch = traces(20)  # model gpt-4o-mini
    rule = SamplingRule(model="gpt-4*", top_score_below=0.99, rate=1.0)
    pipeline = make_pipeline(SamplingConfig(rate=0.0, rules=[rule]))
    close(pipeline, batch)
    assert len(reads) == 20  # the model and scores are known only once read
    assert len(queued(pipeline)) == 20


def test_feedback_in_an_unsampled_trace_is_still_read() -> None:
    batch = traces(1)
    spans = batch[0]
    target = spans[0]
    target.attributes["ragpulse.feedback"] = "thumbs_down"
    join = FeedbackJoin()
    pipeline = make_pipeline(SamplingConfig(rate=0.0), feedback=SpanFeedback(join))
    before = counter(TRACES, "not_sampled")
    close(pipeline, batch)
    assert counter(TRACES, "not_sampled") == before + 1
    assert [w.feedback.trace_id for w in join._pending.values()] == [target.trace_id]


@pytest.mark.parametrize(
    ("config", "kwargs"),
    [
        (SamplingConfig(rate=0.0, metrics=["faithfulness", "knowledge_retention"]), {}),  # conversations
        (SamplingConfig(rate=0.0), {"log_records": True}),
        (SamplingConfig(rate=0.0, early=False), {}),
    ],
    ids=["conversations", "log_records", "early_off"],
)
def test_features_that_need_every_trace_read_every_trace(
    reads: list[str], config: SamplingConfig, kwargs: dict[str, Any]
) -> None:
    batch = traces(8)
    pipeline = make_pipeline(config, **kwargs)
    acks = close(pipeline, batch)
    assert len(reads) == 8
    assert all(ack.holds == 0 for ack in acks)  # none sampled at rate 0: all released


def test_every_turn_reaches_the_conversation_tracker_whatever_the_rate() -> None:
    batch = traces(12)
    for spans in batch:
        spans[0].attributes["session.id"] = "chat-1"
    pipeline = make_pipeline(SamplingConfig(rate=0.05, metrics=["faithfulness", "knowledge_retention"]))
    close(pipeline, batch)
    assert pipeline._conversations is not None
    (conversation,) = pipeline._conversations.drain()
    assert len(conversation) == 12


def test_nothing_is_dropped_unread_without_a_judge(reads: list[str]) -> None:
    pipeline = Pipeline(
        receivers=[],
        assembler=TraceAssembler(),
        dead_letters=LogDeadLetters(),
        sampler=Sampler(SamplingConfig(rate=0.0)),
    )
    close(pipeline, traces(5))
    assert len(reads) == 5  # no sampling without a judge: records still logged, unreadable counted
