"""Human feedback joined to the judge's verdicts: how often the judge and the users agree, per metric.

A user's thumbs or score on an answer (read by `collector/feedback/sources.py` from spans, span events
and a Kafka topic) usually arrives minutes after the judge scored that answer, sometimes before. So
`FeedbackJoin` keeps two bounded in-memory sets: the recent evaluations' verdicts by trace id (fed by
its `exporter`, one more `EvaluationExporter`), and the feedback still waiting for its evaluation,
given up after `match_window_s`. Each feedback ends either matched (one count in the judge-human
confusion matrix per metric it covers, and the judge's score in a histogram split by the human's
verdict: the threshold that separates them is the one to configure) or unmatched with a reason.
Nothing a user typed becomes a label: metric labels are only names the judge evaluated.
"""

from __future__ import annotations

import math
import re
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from collector.metrics import FEEDBACK, FEEDBACK_JUDGE_SCORE, FEEDBACK_UNMATCHED, JUDGE_HUMAN_AGREEMENT
from collector.records import RagRecord
from collector.stages import Evaluation, InProcessExporter, Outcome, SharedTuples

# What feedback widgets send for thumbs (compared lower-cased, emoji without skin tone).
_POSITIVE = frozenset(
    {"up", "thumbs_up", "thumbs-up", "thumbsup", "+1", "positive", "good", "yes", "true", "correct", "👍"}
)
_NEGATIVE = frozenset(
    {"down", "thumbs_down", "thumbs-down", "thumbsdown", "-1", "negative", "bad", "no", "false",
     "incorrect", "wrong", "👎"}
)  # fmt: skip
_EMOJI_MODIFIERS = re.compile("[\ufe0f\U0001f3fb-\U0001f3ff]")  # variation selector, skin tones


class Unreadable(ValueError):
    """Feedback that cannot be used; `reason` is its `ragpulse_feedback_unmatched` reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def verdict(value: Any, positive_at: float = 0.5) -> bool:
    """True for positive feedback, False for negative; raises Unreadable(invalid_value) otherwise."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = _EMOJI_MODIFIERS.sub("", value).strip().lower()
        if word in _POSITIVE:
            return True
        if word in _NEGATIVE:
            return False
        try:
            value = float(word)
        except ValueError:
            raise Unreadable("invalid_value") from None
    if isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1:
        return value >= positive_at
    raise Unreadable("invalid_value")


class FeedbackConfig(BaseModel):
    """Human feedback (`feedback`): read from spans always (unless disabled), from a topic when named."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(
        True, description="Read `ragpulse.feedback` and OpenInference human annotations from spans."
    )
    kafka_topic: str | None = Field(
        None, description="A topic of JSON feedback records (or Phoenix span annotations); unset = none."
    )
    bootstrap_servers: str | None = Field(
        None, description="The feedback topic's brokers; default: kafka.bootstrap_servers."
    )
    group_id: str | None = Field(
        None,
        description="Consumer group of the feedback topic; default '<kafka.group_id>-feedback'. The join is "
        "in memory: with several replicas give each its own group, so each reads all feedback.",
    )
    match_window_s: float = Field(
        3600.0,
        gt=0,
        description="Feedback that arrives before its evaluation waits this long, then is "
        "counted unmatched (expired).",
    )
    max_pending: int = Field(10_000, ge=1, description="Feedback waiting for its evaluation at once.")
    max_traces: int = Field(
        50_000, ge=1, description="Recent evaluated traces whose verdicts are kept for late feedback."
    )
    positive_at: float = Field(
        0.5, ge=0, le=1, description="A human score (0..1) at or above this is positive feedback."
    )


@dataclass(frozen=True, slots=True)
class Feedback:
    """One human verdict on an answer, read from a span, a span event or a topic record."""

    source: str  # span, event, kafka
    trace_id: str | None  # None: a Phoenix annotation that names only the span
    span_id: str | None  # narrows to one answer of the trace when it is that answer's anchor span
    positive: bool
    metric: str | None = None  # None: the answer as a whole (every metric evaluated on it)
    strict_metric: bool = True  # False: a hint (an annotation's name), ignored unless it was evaluated

    @property
    def sentiment(self) -> str:
        return "positive" if self.positive else "negative"


@dataclass(frozen=True, slots=True)
class _Verdict:
    anchor_span_id: str
    metric: str
    outcome: Outcome
    score: float | None


@dataclass(frozen=True, slots=True)
class _Answer:
    """One evaluated answer's verdicts as the join keeps them: compact (about 420 bytes with its trace's
    entry and ids, against 1.1 KB as a list of `_Verdict`s: `benchmarks/answer_memory.py`), since it
    keeps `max_traces` of them for feedback that comes late. The metrics and outcomes tuples are shared
    between answers that have the same."""

    anchor_span_id: str
    metrics: tuple[str, ...]
    outcomes: tuple[Outcome, ...]
    scores: bytes  # float64 per metric; NaN: no score

    def verdicts(self) -> list[_Verdict]:
        scores = struct.unpack(f"{len(self.metrics)}d", self.scores)
        return [
            _Verdict(self.anchor_span_id, metric, outcome, None if math.isnan(score) else score)
            for metric, outcome, score in zip(self.metrics, self.outcomes, scores, strict=True)
        ]


@dataclass(frozen=True, slots=True)
class _Waiting:
    deadline: float
    key: str
    feedback: Feedback


class FeedbackJoin:
    """Thread-safe: spans feed it on the pipeline's loop, the topic from its consumer thread."""

    def __init__(
        self, config: FeedbackConfig | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config or FeedbackConfig()
        self._clock = clock
        self._lock = threading.Lock()
        self._verdicts: OrderedDict[str, tuple[_Answer, ...]] = OrderedDict()  # trace id, least recent first
        self._shared = SharedTuples()  # metric and outcome lists, kept once each
        self._trace_of_span: dict[str, str] = {}  # anchor span id -> trace id (Phoenix names only a span)
        self._pending: OrderedDict[int, _Waiting] = OrderedDict()  # oldest first
        self._waiting: dict[str, list[int]] = {}  # trace id or "span:<id>" -> pending sequence numbers
        self._sequence = 0
        self.exporter = FeedbackExporter(self)

    def add(self, feedback: Feedback) -> None:
        """Count it, then match it with its evaluation now, or keep it until the evaluation comes."""
        FEEDBACK.labels(feedback.source, feedback.sentiment).inc()
        with self._lock:
            self._expire(self._clock())
            trace_id = feedback.trace_id or self._trace_of_span.get(feedback.span_id or "")
            if trace_id is not None and trace_id in self._verdicts:
                self._match(feedback, trace_id, self._verdicts[trace_id])
                return
            key = feedback.trace_id or f"span:{feedback.span_id}"
            if len(self._pending) >= self.config.max_pending:
                _, oldest = self._pending.popitem(last=False)
                self._forget(oldest)
                FEEDBACK_UNMATCHED.labels("pending_full").inc()
            self._sequence += 1
            self._pending[self._sequence] = _Waiting(
                self._clock() + self.config.match_window_s, key, feedback
            )
            self._waiting.setdefault(key, []).append(self._sequence)

    def invalid(self, source: str, reason: str) -> None:
        """Feedback that could not be read (a value that is no verdict, an id that is no id, ...)."""
        FEEDBACK.labels(source, "invalid").inc()
        FEEDBACK_UNMATCHED.labels(reason).inc()

    def evaluated(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        """Remember a record's verdicts, and settle the feedback that was waiting for them."""
        answer = _Answer(
            record.anchor_span_id,
            self._shared(tuple(e.metric for e in evaluations)),
            self._shared(tuple(e.outcome for e in evaluations)),
            struct.pack(
                f"{len(evaluations)}d", *[math.nan if e.score is None else e.score for e in evaluations]
            ),
        )
        trace_id = record.trace_id
        with self._lock:
            self._expire(self._clock())
            known = self._verdicts.pop(trace_id, ())
            self._verdicts[trace_id] = (*known, answer)
            self._trace_of_span[record.anchor_span_id] = trace_id
            while len(self._verdicts) > self.config.max_traces:
                _, dropped = self._verdicts.popitem(last=False)
                for old in dropped:
                    self._trace_of_span.pop(old.anchor_span_id, None)
            for key in (trace_id, f"span:{record.anchor_span_id}"):
                for sequence in self._waiting.pop(key, []):
                    waiting = self._pending.pop(sequence, None)
                    if waiting is not None:
                        self._match(waiting.feedback, trace_id, self._verdicts[trace_id])

    def expire(self) -> None:
        """Count feedback that waited `match_window_s` for an evaluation as unmatched (expired)."""
        with self._lock:
            self._expire(self._clock())

    @property
    def pending(self) -> int:
        return len(self._pending)

    def _expire(self, now: float) -> None:
        while self._pending:
            sequence, waiting = next(iter(self._pending.items()))
            if waiting.deadline > now:
                return
            del self._pending[sequence]
            self._forget(waiting)
            FEEDBACK_UNMATCHED.labels("expired").inc()

    def _forget(self, waiting: _Waiting) -> None:
        sequences = self._waiting.get(waiting.key, [])
        self._waiting[waiting.key] = [s for s in sequences if s in self._pending]
        if not self._waiting[waiting.key]:
            del self._waiting[waiting.key]

    def _match(self, feedback: Feedback, trace_id: str, answers: tuple[_Answer, ...]) -> None:
        """Count the verdicts the feedback covers: its answer's, on its metric (or all of them)."""
        verdicts = [verdict for answer in answers for verdict in answer.verdicts()]
        candidates = verdicts
        if feedback.span_id and any(v.anchor_span_id == feedback.span_id for v in verdicts):
            candidates = [v for v in verdicts if v.anchor_span_id == feedback.span_id]
        if feedback.metric:
            named = [v for v in candidates if v.metric == feedback.metric]
            if named or feedback.strict_metric:
                candidates = named
        if not candidates:
            FEEDBACK_UNMATCHED.labels("no_evaluation").inc()  # the trace was not scored on that metric
            return
        decided = [v for v in candidates if v.outcome in (Outcome.PASSED, Outcome.FAILED)]
        if not decided:
            FEEDBACK_UNMATCHED.labels("no_verdict").inc()  # only error or unmeasured outcomes
            return
        human = feedback.sentiment
        exemplar = {"trace_id": trace_id}
        for verdict in decided:
            judge = verdict.outcome.value
            JUDGE_HUMAN_AGREEMENT.labels(verdict.metric, judge, human).inc(exemplar=exemplar)
            if verdict.score is not None:
                FEEDBACK_JUDGE_SCORE.labels(verdict.metric, human).observe(verdict.score, exemplar)


class FeedbackExporter(InProcessExporter):
    """The join's view of evaluations: an `EvaluationExporter` that only indexes verdicts in memory."""

    def __init__(self, join: FeedbackJoin) -> None:
        self._join = join

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        self._join.evaluated(record, evaluations)
