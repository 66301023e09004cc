"""Sample: which records get judged, and by which metrics.

Judging costs money and time, so only a share of the traffic is evaluated. The choice hashes the
trace id (OTel's TraceIdRatioBased arithmetic on its low 64 bits), never Python's salted `hash()`:
every replica, and a replay next week, makes the same decision for the same trace. A throttle and
a judge budget sit behind the deterministic part; they depend on load, so they are counted apart.
A sampled decision holds the budget's reservation of its expected spend (collector/sampling/budget.py) until
`record_spend` replaces it by the judge's figure or the job ends (`Decision.release`).

The hash needs only the trace id, so `drops_early` takes it before a trace is read (extracted): a
trace whose key is above the highest rate any of its records could get is dropped for the cost of
parsing it. Rules are read as far as the spans tell (route, services); a rule on `model` or
`top_score_below` needs the extracted record, so its rate counts whenever its other conditions hold.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Annotated

from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from pydantic import BaseModel, ConfigDict, Field, model_validator

from collector.assembly.conversations import ConversationConfig
from collector.conventions.common import ExtractionError, route
from collector.judging.cases import filled_fields, to_conversation_case, to_test_case
from collector.judging.config import JudgeConfig
from collector.metrics import JUDGE_BUDGET_REMAINING, SAMPLING_DECISIONS
from collector.records import RagRecord
from collector.sampling.budget import BudgetConfig, JudgeBudget, Reservation
from collector.spans import Span
from evaluators import CaseField, CustomMetrics, TestCase, about_images, image_positions, required_inputs

Rate = Annotated[float, Field(ge=0.0, le=1.0)]
Clock = Callable[[], float]


class SamplingOutcome(StrEnum):
    SAMPLED = "sampled"
    NOT_SAMPLED = "not_sampled"
    THROTTLED = "throttled"
    OVER_BUDGET = "over_budget"
    NO_RAG_DATA = "no_rag_data"


class SamplingRule(BaseModel):
    """Overrides the base rate for matching records; e.g. always judge answers from weak retrieval."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    route: str | None = Field(None, description="Exact value or glob (fnmatch), e.g. '/api/*'.")
    service: str | None = Field(None, description="Exact value or glob.")
    model: str | None = Field(None, description="Exact value or glob, e.g. 'gpt-4*'.")
    top_score_below: float | None = Field(
        None,
        description="Matches when the best retrieval score is below this (never without scores).",
    )
    rate: Rate = Field(1.0, description="The base rate for matching records (1.0 = always).")

    @model_validator(mode="after")
    def _has_a_condition(self) -> SamplingRule:
        if all(c is None for c in (self.route, self.service, self.model, self.top_score_below)):
            raise ValueError("a sampling rule needs at least one of route, service, model, top_score_below")
        return self

    def matches(self, record: RagRecord) -> bool:
        labels = ((self.route, record.route), (self.service, record.service), (self.model, record.model))
        if any(pattern is not None and not fnmatchcase(value, pattern) for pattern, value in labels):
            return False
        if self.top_score_below is not None:
            top = record.top_retrieval_score
            return top is not None and top < self.top_score_below
        return True

    def may_match(self, route: str, services: Collection[str]) -> bool:
        """Whether a record of a trace with this route and these services may match, before the trace
        is read: `model` and `top_score_below` are known only from the extracted record, so they may."""
        if self.route is not None and not fnmatchcase(route, self.route):
            return False
        return self.service is None or any(fnmatchcase(service, self.service) for service in services)


class SamplingConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: Rate = Field(
        1.0, description="Share of traces evaluated (1.0 = every trace); lower it in production."
    )
    metrics: list[str] = Field(
        default_factory=lambda: [
            "faithfulness",
            "answer_relevancy",
            "contextual_relevancy",
            "context_utilization",
            "hallucination",
        ],
        description="Reference-free metrics, run on every sampled record whose inputs exist. Conversational "
        "metrics (knowledge_retention, conversation_relevancy, conversation_completeness) listed here run "
        "on each conversation (records sharing a conversation id: session.id, gen_ai.conversation.id or "
        "OpenLLMetry's session_id association property) once it goes quiet.",
    )
    reference_metrics: list[str] = Field(
        default_factory=lambda: ["contextual_precision", "contextual_recall", "answer_correctness"],
        description="Run only when the record carries an expected output.",
    )
    metric_rates: dict[str, Rate] = Field(
        default_factory=dict,
        description="Per-metric rates on top of the base decision (deterministic per trace + metric).",
    )
    rules: list[SamplingRule] = Field(default_factory=list, description="First matching rule sets the rate.")
    max_evaluations_per_minute: int | None = Field(
        None, gt=0, description="Throttle (token bucket) on sampled records; unset = none."
    )
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    conversations: ConversationConfig = Field(default_factory=ConversationConfig)
    early: bool = Field(
        True,
        description="Decide on the trace id before a trace is read, so a trace sampling drops costs little "
        "more than parsing it (counted as not_sampled, one per trace). Such a trace is not read: it adds "
        "nothing to the unreadable-trace counts and is never dead-lettered. false: every trace is read. "
        "Conversational metrics and --log-records read every trace whatever this says.",
    )


@dataclass(frozen=True, slots=True)
class Decision:
    decision: SamplingOutcome
    metrics: tuple[str, ...] = ()  # the metrics to run; empty unless sampled
    case: TestCase | None = None  # what the evaluator scores; set when sampled
    # the judge budget held for it while sampled (not part of the decision: replicas decide alike)
    reservation: Reservation | None = field(default=None, compare=False, repr=False)

    @property
    def sampled(self) -> bool:
        return self.decision is SamplingOutcome.SAMPLED

    @property
    def reserved_usd(self) -> float:
        return self.reservation.usd if self.reservation is not None and self.reservation.open else 0.0

    @property
    def reserved_tokens(self) -> float:
        return self.reservation.tokens if self.reservation is not None and self.reservation.open else 0.0

    def release(self) -> None:
        """The job is over (judged, shed, a duplicate, failed): what it reserved and did not spend goes
        back to the budget. Idempotent."""
        if self.reservation is not None:
            self.reservation.release()


def trace_key(trace_id: str, salt: str = "") -> int:
    """A 64-bit integer for the ratio test: the trace id's low 8 bytes, or a blake2b for a salted key."""
    if not salt:
        try:
            return int(trace_id, 16) & TraceIdRatioBased.TRACE_ID_LIMIT
        except ValueError:
            pass  # not hex (should not happen after extract): hash it like a salted key
    digest = hashlib.blake2b(f"{trace_id}\x00{salt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def ratio_sampled(key: int, rate: float) -> bool:
    return key < TraceIdRatioBased.get_bound_for_rate(rate)


class TokenBucket:
    """`capacity` takes per minute, refilled continuously; starts full."""

    def __init__(self, per_minute: int, clock: Clock) -> None:
        self._capacity = float(per_minute)
        self._per_second = per_minute / 60.0
        self._tokens = self._capacity
        self._clock = clock
        self._last = clock()

    def take(self) -> bool:
        now = self._clock()
        self._tokens = min(self._capacity, self._tokens + max(0.0, now - self._last) * self._per_second)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class Sampler:
    """Decides per record: sampled (with its metrics), or why not. Thread-safe."""

    def __init__(
        self,
        config: SamplingConfig,
        clock: Clock = time.time,
        custom: CustomMetrics | None = None,
        judge: JudgeConfig | None = None,
    ) -> None:
        """`judge`: what prices an evaluation's expected spend (None: the offline judge, which spends
        nothing)."""
        self.config = config
        names = (*config.metrics, *config.reference_metrics)
        self._inputs = {name: required_inputs(name, custom) for name in names}  # names checked at load
        self._about_images = frozenset(name for name in names if about_images(name))
        self.conversation_metrics = tuple(m for m in config.metrics if CaseField.TURNS in self._inputs[m])
        # a conversation is sampled by its own id, from every turn: no trace may be dropped unread
        self.decides_early = config.early and not self.conversation_metrics
        self._lock = threading.Lock()
        per_minute = config.max_evaluations_per_minute
        self._throttle = TokenBucket(per_minute, clock) if per_minute else None
        self._budget = JudgeBudget.for_judge(config.budget, clock, judge)
        JUDGE_BUDGET_REMAINING.set(1.0)

    def drops_early(self, trace_id: str, spans: Sequence[Span]) -> bool:
        """True when no record of this trace can be sampled, decided from the trace id before the trace
        is read (counted as one not_sampled decision); False when it must be read (`decide` then decides
        each record, alike for every record this lets through)."""
        if not self.decides_early:
            return False
        try:
            rate = self._highest_rate(spans)
        except ExtractionError:  # a route of the wrong type: reading the trace dead-letters it
            return False
        if ratio_sampled(trace_key(trace_id), rate):
            return False
        SAMPLING_DECISIONS.labels(SamplingOutcome.NOT_SAMPLED.value).inc()
        return True

    def _highest_rate(self, spans: Sequence[Span]) -> float:
        """The highest base rate a record of the trace could get: the default or a rule that may match."""
        rules = self.config.rules
        if not rules:
            return self.config.rate
        trace_route, services = route(spans), {span.service for span in spans}
        return max([self.config.rate, *(r.rate for r in rules if r.may_match(trace_route, services))])

    def decide(self, record: RagRecord) -> Decision:
        decision = self._decide(record)
        SAMPLING_DECISIONS.labels(decision.decision.value).inc()
        return decision

    def _decide(self, record: RagRecord) -> Decision:
        case = to_test_case(record)
        metrics = self.applicable_metrics(record, case)
        if not record.nodes or not metrics:
            return Decision(SamplingOutcome.NO_RAG_DATA)
        if not ratio_sampled(trace_key(record.trace_id), self.base_rate(record)):
            return Decision(SamplingOutcome.NOT_SAMPLED)
        rates = self.config.metric_rates
        metrics = tuple(
            m for m in metrics if m not in rates or ratio_sampled(trace_key(record.trace_id, m), rates[m])
        )
        return self._admit(metrics, case)

    def decide_conversation(self, turns: tuple[RagRecord, ...]) -> Decision:
        """A quiet conversation: sampled by its id (every replica, every replay decides alike), at the
        rate of its last turn's rule, under the same throttle and budget as records."""
        last = turns[-1]
        case = to_conversation_case(turns)
        if not self.conversation_metrics or not case.has(CaseField.TURNS):
            decision = Decision(SamplingOutcome.NO_RAG_DATA)
        elif not ratio_sampled(trace_key(last.conversation_id, "conversation"), self.base_rate(last)):
            decision = Decision(SamplingOutcome.NOT_SAMPLED)
        else:
            decision = self._admit(self.conversation_metrics, case)
        SAMPLING_DECISIONS.labels(decision.decision.value).inc()
        return decision

    def _admit(self, metrics: tuple[str, ...], case: TestCase) -> Decision:
        if not metrics:
            return Decision(SamplingOutcome.NOT_SAMPLED)
        reservation = self._budget.reserve(case, len(metrics))
        if reservation is None:
            return Decision(SamplingOutcome.OVER_BUDGET)
        with self._lock:
            throttled = self._throttle is not None and not self._throttle.take()
        if throttled:
            reservation.release()
            return Decision(SamplingOutcome.THROTTLED)
        return Decision(SamplingOutcome.SAMPLED, metrics, case, reservation)

    def applicable_metrics(self, record: RagRecord, case: TestCase | None = None) -> tuple[str, ...]:
        """The configured metrics whose inputs this record has, in configuration order; the metrics about
        images only where a passage is an image."""
        case = case or to_test_case(record)
        present = filled_fields(case)
        if record.nodes and record.response.strip():  # passages without text: their metrics say unmeasured
            present |= {CaseField.RETRIEVAL_CONTEXT, CaseField.CONTEXT}
        names = list(self.config.metrics)
        if CaseField.EXPECTED_OUTPUT in present:
            names += [m for m in self.config.reference_metrics if m not in names]
        names = [m for m in names if all(f in present for f in self._inputs[m])]
        if any(m in self._about_images for m in names) and not image_positions(case.retrieval_context or []):
            names = [m for m in names if m not in self._about_images]
        return tuple(names)

    def base_rate(self, record: RagRecord) -> float:
        for rule in self.config.rules:
            if rule.matches(record):
                return rule.rate
        return self.config.rate

    def record_spend(self, tokens: int, usd: float, reserved: Decision | None = None) -> None:
        """Called after each evaluation with what the judge spent on it. With `reserved`, the decision it
        was admitted by: a spend replaces its reservation; nothing spent (the judge failed, the record
        waits for a retry) leaves the reservation held until `Decision.release`."""
        if tokens < 0 or usd < 0 or math.isnan(usd):
            raise ValueError(f"judge spend must be non-negative numbers, got tokens={tokens} usd={usd}")
        self._budget.settle(reserved.reservation if reserved is not None else None, (tokens, usd))

    def budget_remaining_ratio(self) -> float:
        """The share of the tightest budget window neither spent nor reserved (1.0 without a budget)."""
        return self._budget.remaining_ratio()
