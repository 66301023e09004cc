"""How the stages speak: the small interfaces between them and the values they pass.

    receiver --Received--> pipeline (assemble, extract, sample) --RagRecord--> Evaluator
        --Evaluation--> EvaluationExporter ... then every Ack is released and the source commits
    anything that cannot be processed --DeadLetter--> DeadLetterSink

Modelled on the OTel SDK's SpanProcessor/SpanExporter: one job per interface, results are values,
flushing and shutting down are explicit. Nothing here blocks its caller: receivers run their own
threads, exporters and dead-letter sinks hand slow I/O to their own threads, and only the
consumer thread of a source commits what its acks allow.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from collector.records import RagRecord
from collector.spans import LogEvent, Span
from evaluators import Outcome, TestCase, VerdictRecord

__all__ = [
    "Ack",
    "DeadLetter",
    "DeadLetterSink",
    "Deliver",
    "Evaluation",
    "EvaluationExporter",
    "Evaluator",
    "InProcessExporter",
    "Outcome",
    "Received",
    "Receiver",
    "SharedTuples",
    "Spend",
]


# --- receiving ----------------------------------------------------------------------------------
class Ack(Protocol):
    """A hold on a source record (a Kafka offset, an OTLP request): released once per holder.

    The record is done, and its offset committable, when the last hold is released. Releasing is
    thread-safe: exporters' and dead-letter threads may release. `replayable`: the source keeps the
    record until it is released (Kafka), so it can wait instead of being shed under load.
    """

    replayable: bool

    def hold(self) -> None: ...

    def release(self) -> None: ...


@dataclass(slots=True)
class Received:
    """Spans (or log events) decoded from one Kafka record or one OTLP request, and one hold on it.

    The hold passes to the pipeline with the spans; it releases it once they are buffered (by
    then each trace they joined holds the record too).
    """

    spans: list[Span]
    ack: Ack
    source: str  # "kafka", "otlp" (HTTP) or "otlp_grpc"
    logs: list[LogEvent] = field(default_factory=list)


Deliver = Callable[[Received], None]


class Receiver(Protocol):
    """A source of spans. Runs its own thread(s); the thread that reads also commits."""

    name: str

    def start(self, deliver: Deliver) -> None:
        """Begin delivering batches (from a background thread); returns at once."""
        ...

    def stop(self) -> None:
        """Stop taking new input and return at once; what was delivered is still acknowledged."""
        ...

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Commit what is done and release resources (blocks up to `timeout_s`; call off the loop)."""
        ...

    @property
    def ready(self) -> bool:
        """Connected and receiving (for /readyz)."""
        ...

    @property
    def alive(self) -> bool:
        """Its threads run (for /healthz): False means a restart, never a silent stall."""
        ...


# --- dead letters ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DeadLetter:
    """Input set aside: the original bytes, why, and where they came from."""

    reason: str  # low-cardinality: invalid_protobuf, too_large, internal_error, ...
    detail: str
    payload: bytes
    key: bytes | None = None
    source: str = ""  # kafka, otlp, otlp_grpc, extract (+ "/logs" for a logs payload)


def internal_error_detail(exc: BaseException) -> str:
    """The detail of an `internal_error` dead letter (an unexpected exception): type and message, bounded."""
    return f"{type(exc).__name__}: {exc}"[:300]


# What an exporter or a dead-letter sink has held for longer than this, it is not `delivering`.
UNDELIVERED_AFTER_S = 60.0


class DeadLetterSink(Protocol):
    def write(self, letter: DeadLetter, on_written: Callable[[], None]) -> None:
        """Set `letter` aside without blocking; `on_written` runs (on any thread) once it is safe.

        If it cannot be written, `on_written` never runs: the caller's hold stays, the offset is
        not committed, and the record is read again after a restart. Failures are counted.
        """
        ...

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued (up to `timeout_s`), then release connections."""
        ...

    @property
    def delivering(self) -> bool:
        """False while a letter has waited too long to be written (/readyz says so)."""
        ...


# --- evaluating -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Evaluation:
    """One metric's outcome for one record, as the exporters see it (no evaluator internals)."""

    metric: str  # e.g. "faithfulness"
    outcome: Outcome
    score: float | None  # None unless outcome is passed/failed; never NaN
    reason: str
    threshold: float
    lower_is_better: bool
    judge: str  # "offline", "openai", "cascade"
    judge_model: str
    duration_s: float = 0.0
    cause: str | None = None  # why it failed (an `evaluators.Cause`); None unless failed
    verdicts: tuple[VerdictRecord, ...] = ()  # the judged items behind the score (claims, statements, ...)
    # Per retrieved passage, from all the record's verdicts: "relevant", "irrelevant" or None (not judged).
    passage_relevance: tuple[str | None, ...] = ()
    tokens: int = 0  # what the judge spent on this metric (the claims shared by metrics count once)
    cost_usd: float = 0.0
    # The cascade's offline outcome when the LLM judge re-scored the metric (None: not escalated): where
    # the two differ, the review queue asks a person.
    offline_outcome: Outcome | None = None


_T = TypeVar("_T", bound=tuple[Any, ...])


class SharedTuples:
    """One tuple kept for each distinct list of a record's metric names (or outcomes), its strings
    interned: an index that remembers many records' evaluations (the duplicate filter, the feedback
    join) then holds a reference per record, not a tuple and a fresh name per metric (names read back
    from a judge worker are new strings). At most `max_kept` lists; beyond, a list is kept as given."""

    def __init__(self, max_kept: int = 4096) -> None:
        self.max_kept = max_kept
        self._kept: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def __call__(self, values: _T) -> _T:
        kept = self._kept.get(values)
        if kept is None:
            if len(self._kept) >= self.max_kept:
                return values
            kept = self._kept[values] = tuple(sys.intern(v) if type(v) is str else v for v in values)
        return kept  # type: ignore[return-value]  # equal to `values`, element by element


@dataclass(frozen=True, slots=True)
class Spend:
    """What the judge spent on one record (the sampler's budget counts it)."""

    tokens: int = 0
    usd: float = 0.0

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.tokens + other.tokens, self.usd + other.usd)


class Evaluator(Protocol):
    @property
    def ready(self) -> bool:
        """The judge is loaded, and not known to be failing (for /readyz)."""
        ...

    async def evaluate(
        self, record: RagRecord, metrics: Sequence[str], case: TestCase | None = None
    ) -> tuple[list[Evaluation], Spend]:
        """Score `record` (as `case`, when already built) on `metrics`; a judge failure is an
        `error` outcome, never an exception."""
        ...

    def unavailable(self, metrics: Sequence[str], reason: str) -> list[Evaluation]:
        """`error` evaluations, with `reason`, for metrics the judge never got to score."""
        ...

    def shutdown(self) -> None: ...


# --- exporting ------------------------------------------------------------------------------------
class EvaluationExporter(Protocol):
    """Where evaluations go. `export` never blocks on I/O and never raises for a transport failure
    (it counts and logs): one slow or unreachable backend must not stall the others."""

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        """Hand over one record's evaluations (buffer them; the exporter's own thread sends)."""
        ...

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        """Push out what is buffered; True when everything was delivered in time (blocks)."""
        ...

    @property
    def saturated(self) -> bool:
        """Its buffer is nearly full (its backend is down or slow): evaluation waits rather than have
        it drop what it could not hold."""
        ...

    @property
    def delivering(self) -> bool:
        """False while what it holds has waited too long for its backend (an outage, a stall): /readyz
        says which part of the process cannot deliver, instead of a silent 200."""
        ...

    def shutdown(self) -> None:
        """Flush what is buffered and release connections; export() is a no-op afterwards."""
        ...


class InProcessExporter:
    """An exporter whose `export` is the delivery (metrics, an index in memory, a tally): nothing is
    buffered, so a flush has nothing to wait for, and it is never saturated and always delivering."""

    saturated, delivering = False, True

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        raise NotImplementedError

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return True

    def shutdown(self) -> None:
        """Nothing to flush, nothing to release."""
