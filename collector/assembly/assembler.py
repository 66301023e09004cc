"""Assemble spans into traces: the query, the nodes and the response sit on different spans.

A trace closes when its root span has arrived (OTLP exports only ended spans) and no span came
for `quiet_period_s`, or when it reaches `max_age_s` or `max_spans_per_trace`. When the buffer is
full the oldest trace is closed early (`evicted`): it is still extracted and counted, never
silently dropped. Each trace carries the acknowledgements of the source records that fed it, so
a record's offset is committed only when every trace it contributed to is done.

Log events (OTLP log records with a trace context) are buffered with their trace and attached to
their span as events when the trace closes; they never open or root a trace on their own, but a
trace seen only through logs still closes at `max_age_s` and is counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from collector.spans import LogEvent, Span
from collector.stages import Ack


class AssemblyConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    quiet_period_s: float = Field(5.0, ge=0, description="Quiet time after the root span before closing.")
    max_age_s: float = Field(60.0, gt=0, description="Close a trace this long after its first span.")
    max_spans_per_trace: int = Field(1000, ge=1)
    max_traces: int = Field(20_000, ge=1, description="Traces buffered at once; the oldest is evicted.")
    max_spans: int = Field(200_000, ge=1, description="Spans buffered at once; the oldest trace is evicted.")


@dataclass(slots=True)
class AssembledTrace:
    trace_id: str
    spans: list[Span]
    acks: list[Ack]
    close_reason: str  # quiet, max_age, max_spans, evicted, shutdown
    first_seen: float = 0.0

    def release(self) -> None:
        for ack in self.acks:
            ack.release()
        self.acks = []

    @property
    def replayable(self) -> bool:
        """Every record it came from waits in its source until released (Kafka offsets)."""
        return bool(self.acks) and all(ack.replayable for ack in self.acks)


@dataclass(slots=True)
class _Pending:
    spans: list[Span] = field(default_factory=list)
    logs: list[LogEvent] = field(default_factory=list)
    acks: list[Ack] = field(default_factory=list)
    first_seen: float = 0.0
    last_seen: float = 0.0
    has_root: bool = False


class TraceAssembler:
    """Not thread-safe: the pipeline calls it from one thread."""

    def __init__(self, config: AssemblyConfig | None = None) -> None:
        self.config = config or AssemblyConfig()
        self._pending: dict[str, _Pending] = {}  # insertion order = first seen
        self._span_count = 0
        self._closed: list[AssembledTrace] = []

    def __len__(self) -> int:
        return len(self._pending)

    @property
    def span_count(self) -> int:
        return self._span_count

    def add(self, spans: Iterable[Span], ack: Ack, now: float, logs: Iterable[LogEvent] = ()) -> None:
        """Buffer spans and log events; every trace (or part of one) they join holds `ack` once more."""
        held: dict[int, _Pending] = {}  # the entries holding `ack` for this call (kept: ids stay unique)
        for span in spans:
            pending = self._pending_for(span.trace_id, ack, now, held)
            pending.spans.append(span)
            pending.has_root = pending.has_root or span.is_root
            self._span_count += 1
            if len(pending.spans) >= self.config.max_spans_per_trace:
                self._close(span.trace_id, "max_spans")
        for log in logs:  # counted as spans for the memory bound: a log record is about as large
            pending = self._pending_for(log.trace_id, ack, now, held)
            pending.logs.append(log)
            self._span_count += 1
            if len(pending.spans) + len(pending.logs) >= self.config.max_spans_per_trace:
                self._close(log.trace_id, "max_spans")

    def _pending_for(self, trace_id: str, ack: Ack, now: float, held: dict[int, _Pending]) -> _Pending:
        pending = self._pending.get(trace_id)
        if pending is None:
            self._make_room(now)
            pending = self._pending[trace_id] = _Pending(first_seen=now)
        pending.last_seen = now
        # Held per pending entry, not per trace id: a trace closed (max_spans) or evicted in the middle
        # of this batch continues in a new entry, which must hold the record as well.
        if id(pending) not in held:
            held[id(pending)] = pending
            ack.hold()
            pending.acks.append(ack)
        return pending

    def expire(self, now: float) -> list[AssembledTrace]:
        """Pop every trace that is complete at `now` (plus any closed early by `add`)."""
        quiet, max_age = self.config.quiet_period_s, self.config.max_age_s
        for trace_id, pending in list(self._pending.items()):
            if pending.has_root and now - pending.last_seen >= quiet:
                self._close(trace_id, "quiet")
            elif now - pending.first_seen >= max_age:
                self._close(trace_id, "max_age")
        closed, self._closed = self._closed, []
        return closed

    def drain(self) -> list[AssembledTrace]:
        """Close everything (shutdown)."""
        for trace_id in list(self._pending):
            self._close(trace_id, "shutdown")
        closed, self._closed = self._closed, []
        return closed

    def _make_room(self, now: float) -> None:
        while self._pending and (
            len(self._pending) >= self.config.max_traces or self._span_count >= self.config.max_spans
        ):
            self._close(next(iter(self._pending)), "evicted")

    def _close(self, trace_id: str, reason: str) -> None:
        pending = self._pending.pop(trace_id)
        self._span_count -= len(pending.spans) + len(pending.logs)
        if pending.logs:
            by_id = {span.span_id: span for span in pending.spans}
            for log in pending.logs:  # a log whose span never arrived has nothing to describe
                if (span := by_id.get(log.span_id)) is not None:
                    span.events.append(log.event)
        self._closed.append(AssembledTrace(trace_id, pending.spans, pending.acks, reason, pending.first_seen))
