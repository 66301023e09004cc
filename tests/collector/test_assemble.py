"""Assembly closes traces at the right moment, bounds memory, and holds acks until done."""

from __future__ import annotations

from kafka.structs import TopicPartition

from collector.assembly.assembler import AssemblyConfig, TraceAssembler
from collector.pipeline.offsets import OffsetTracker
from collector.receivers.decode import decode
from collector.spans import flatten
from testkit.rag_traces import encode, make_spans


class CountingAck:
    """An ack that counts its holds (a Kafka record's: it can be read again until committed)."""

    replayable = True

    def __init__(self) -> None:
        self.holds = 1

    def hold(self) -> None:
        self.holds += 1

    def release(self) -> None:
        self.holds -= 1


def _spans(convention: str = "openinference"):
    return flatten(decode(encode(make_spans(convention))))


def test_trace_closes_after_root_and_quiet_period() -> None:
    spans = _spans()
    children, root = [s for s in spans if not s.is_root], [s for s in spans if s.is_root]
    assembler = TraceAssembler(AssemblyConfig(quiet_period_s=5, max_age_s=60))
    ack = CountingAck()
    assembler.add(children, ack, now=0.0)
    assert assembler.expire(10.0) == []  # no root yet: not complete
    assembler.add(root, ack, now=10.0)
    assert assembler.expire(14.9) == []
    (trace,) = assembler.expire(15.0)
    assert trace.close_reason == "quiet" and len(trace.spans) == len(spans)
    assert ack.holds == 3  # the receiver's own hold + one per add into this trace
    trace.release()
    assert ack.holds == 1


def test_trace_without_root_closes_at_max_age() -> None:
    children = [s for s in _spans() if not s.is_root]
    assembler = TraceAssembler(AssemblyConfig(quiet_period_s=1, max_age_s=30))
    assembler.add(children, CountingAck(), now=0.0)
    assert assembler.expire(29.0) == []
    assert [t.close_reason for t in assembler.expire(30.0)] == ["max_age"]


def test_caps_on_spans_and_traces_evict_oldest_and_keep_it() -> None:
    assembler = TraceAssembler(AssemblyConfig(max_traces=2, max_spans_per_trace=2))
    first, second, third = _spans("ragpulse"), _spans("ragpulse"), _spans("gen_ai")
    for now, spans in enumerate((first, second, third)):
        assembler.add(spans, CountingAck(), now=float(now))
    closed = assembler.expire(3.0)
    reasons = sorted(t.close_reason for t in closed)
    assert "evicted" in reasons and "max_spans" in reasons  # gen_ai trace has 3 spans > cap 2
    assert len(assembler) <= 2


def test_offsets_commit_only_contiguous_done_records() -> None:
    tracker = OffsetTracker()
    tp = TopicPartition("t", 0)
    acks = [tracker.track(tp, offset) for offset in range(5)]
    acks[1].release()
    acks[2].release()
    assert tracker.take_committable() == {}  # offset 0 still in flight
    acks[0].release()
    assert tracker.take_committable() == {tp: 3}
    acks[4].hold()
    acks[4].release()
    acks[3].release()
    assert tracker.take_committable() == {tp: 4}
    acks[4].release()
    assert tracker.take_committable() == {tp: 5}
    assert tracker.in_flight() == 0
