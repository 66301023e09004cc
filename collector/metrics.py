"""Every Prometheus metric ragpulse exports, declared once (names from DESIGN.md).

The hot path is `METRIC.labels(...).inc()`. Free-text label values (service, route, model) pass
through `LabelPolicy.bound`, so a misbehaving app can never create unbounded series.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from pydantic import BaseModel, ConfigDict, Field

REGISTRY = CollectorRegistry(auto_describe=True)
OTHER = "other"

SCORE_BUCKETS = tuple(round(0.05 * i, 2) for i in range(1, 21))
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

BUILD_INFO = Gauge("ragpulse_build_info", "ragpulse version (always 1).", ["version"], registry=REGISTRY)

# Scores
EVALUATION_SCORE = Histogram(
    "ragpulse_evaluation_score",
    "Evaluation scores (0..1) per metric; exemplars link to the trace.",
    ["metric", "service", "route", "version"],
    buckets=SCORE_BUCKETS,
    registry=REGISTRY,
)
EVALUATIONS = Counter(
    "ragpulse_evaluations",
    "Evaluations by outcome (passed, failed, error, unmeasured).",
    ["metric", "service", "route", "version", "outcome"],
    registry=REGISTRY,
)
FAILURES = Counter(
    "ragpulse_failures",
    "Failed evaluations by cause (no_context, irrelevant_context, incomplete_context: the retriever's; "
    "unsupported_claim, contradicted_claim, off_topic, refusal, incorrect_answer, criteria: the "
    "generator's).",
    ["metric", "cause", "service"],
    registry=REGISTRY,
)
VERSION_FIRST_SEEN = Gauge(
    "ragpulse_version_first_seen_timestamp_seconds",
    "When this process first scored a version of a service (unix seconds): the newest version is the one "
    "with the largest value. Removed with the version's series when `labels.max_versions` evicts it.",
    ["service", "version"],
    registry=REGISTRY,
)

# Pipeline
SPANS_RECEIVED = Counter(
    "ragpulse_spans_received", "Spans decoded, by source.", ["source"], registry=REGISTRY
)
LOG_RECORDS_RECEIVED = Counter(
    "ragpulse_log_records_received",
    "Log records linked to a span (trace and span id) handed to the assembler, by source.",
    ["source"],
    registry=REGISTRY,
)
TRACES = Counter(
    "ragpulse_traces",
    "Traces by assembly state (assembled, evicted, extracted, no_rag_data, invalid).",
    ["state"],
    registry=REGISTRY,
)
SAMPLING_DECISIONS = Counter(
    "ragpulse_sampling_decisions", "Sampling decisions by outcome.", ["decision"], registry=REGISTRY
)
DROPPED = Counter(
    "ragpulse_dropped", "Records or evaluations not evaluated, by reason.", ["reason"], registry=REGISTRY
)
DEAD_LETTERS = Counter(
    "ragpulse_dead_letters", "Bad input set aside, by reason.", ["reason"], registry=REGISTRY
)
QUEUE_DEPTH = Gauge("ragpulse_queue_depth", "Records waiting for evaluation.", registry=REGISTRY)
ASSEMBLY_TRACES = Gauge("ragpulse_assembly_traces", "Traces buffered in the assembler.", registry=REGISTRY)
CONSUMER_LAG = Gauge(
    "ragpulse_kafka_consumer_lag",
    "Records behind the partition end.",
    ["topic", "partition"],
    registry=REGISTRY,
)
END_TO_END = Histogram(
    "ragpulse_end_to_end_seconds",
    "From the anchor span's end to its scores exported.",
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)

# Judge
JUDGE_REQUESTS = Counter(
    "ragpulse_judge_requests",
    "Judge HTTP requests by outcome.",
    ["judge", "model", "outcome"],
    registry=REGISTRY,
)
JUDGE_TOKENS = Counter(
    "ragpulse_judge_tokens",
    "Judge tokens by kind (prompt, completion).",
    ["judge", "model", "kind"],
    registry=REGISTRY,
)
JUDGE_COST = Counter(
    "ragpulse_judge_cost_usd",
    "Estimated judge spend in US dollars (from judge.prices_per_million).",
    ["judge", "model"],
    registry=REGISTRY,
)
JUDGE_LATENCY = Histogram(
    "ragpulse_judge_latency_seconds", "Judge request latency.", buckets=LATENCY_BUCKETS, registry=REGISTRY
)
JUDGE_BUDGET_REMAINING = Gauge(
    "ragpulse_judge_budget_remaining_ratio",
    "Share of the current judge budget window left (1 = no budget).",
    registry=REGISTRY,
)
CASCADE = Counter(
    "ragpulse_cascade",
    "Cascade outcomes (offline_only, escalated, llm_only: metrics the offline judge cannot judge).",
    ["stage"],
    registry=REGISTRY,
)
JUDGE_INPUT_REWRITES = Counter(
    "ragpulse_judge_input_rewrites",
    "What was masked or trimmed before a case left for an external judge, by what (email_masked, "
    "phone_masked, card_masked, redacted_masked, passage_cut, passage_left_out).",
    ["what"],
    registry=REGISTRY,
)
IMAGES_LEFT_OUT = Counter(
    "ragpulse_images_left_out",
    "Images in a trace not kept as image passages, by reason (too_large: a data URI over "
    "evaluators.images.MAX_DATA_URI_CHARS; not_recognised: a declared image whose reference is no "
    "image URL or data URI, e.g. an instrumentation's __REDACTED__).",
    ["reason"],
    registry=REGISTRY,
)
CIRCUIT_OPEN = Gauge(
    "ragpulse_judge_circuit_open", "1 while the judge circuit breaker is open.", registry=REGISTRY
)

# Exporters
EXPORT_ERRORS = Counter(
    "ragpulse_export_errors",
    "Evaluations (or dead letters) an exporter failed to deliver, by exporter (otlp, kafka, phoenix, store, "
    "dead_letters).",
    ["exporter"],
    registry=REGISTRY,
)

VERDICTS_TRUNCATED = Counter(
    "ragpulse_verdicts_truncated",
    "Verdicts left out of an evaluation's span, result or stored record (beyond verdicts.max_items), by "
    "exporter (otlp, kafka, phoenix, store).",
    ["exporter"],
    registry=REGISTRY,
)

FORWARDED = Counter(
    "ragpulse_forwarded",
    "OTLP requests forwarded to otlp.forward.endpoint, by signal (traces, logs) and outcome (sent, "
    "rejected: the upstream answered a non-retryable error, dropped: queue full, retries over, or shutdown).",
    ["signal", "outcome"],
    registry=REGISTRY,
)

# Judge canary (collector/canary.py): a frozen golden set re-judged on a schedule
CANARY_AGREEMENT = Gauge(
    "ragpulse_judge_canary_agreement_ratio",
    "Share of the golden set's (case, metric) verdicts the judge repeats at the last canary run (1 = "
    "unchanged; lower = the judge changed, not the app).",
    ["metric", "judge", "model"],
    registry=REGISTRY,
)
CANARY_SCORE_DRIFT = Gauge(
    "ragpulse_judge_canary_score_drift",
    "Mean absolute score change of the golden set from its stored verdicts, at the last canary run.",
    ["metric", "judge", "model"],
    registry=REGISTRY,
)
CANARY_RUNS = Counter(
    "ragpulse_judge_canary_runs",
    "Judge canary runs by outcome (ok; error: nothing could be judged, e.g. the judge is down).",
    ["outcome"],
    registry=REGISTRY,
)
CANARY_LAST_RUN = Gauge(
    "ragpulse_judge_canary_last_run_timestamp_seconds",
    "Unix time of the last successful canary run: the agreement and drift gauges are as of then.",
    registry=REGISTRY,
)

# Human feedback (collector/feedback.py): users' thumbs or scores joined to the judge's verdicts
FEEDBACK = Counter(
    "ragpulse_feedback",
    "Human feedback read, by source (span, event, kafka) and sentiment (positive, negative, invalid).",
    ["source", "sentiment"],
    registry=REGISTRY,
)
JUDGE_HUMAN_AGREEMENT = Counter(
    "ragpulse_judge_human_agreement",
    "Human feedback matched to a judge verdict, per metric: judge (passed, failed) by human (positive, "
    "negative), the confusion matrix of the judge against users; exemplars link to the trace.",
    ["metric", "judge", "human"],
    registry=REGISTRY,
)
FEEDBACK_UNMATCHED = Counter(
    "ragpulse_feedback_unmatched",
    "Human feedback not compared with a verdict, by reason (expired: no evaluation came within "
    "feedback.match_window_s; no_evaluation: not scored on the metric it names; no_verdict: only error or "
    "unmeasured outcomes; pending_full; not_human; invalid_value, invalid_id, invalid_record).",
    ["reason"],
    registry=REGISTRY,
)
FEEDBACK_JUDGE_SCORE = Histogram(
    "ragpulse_feedback_judge_score",
    "The judge's score of answers users rated, by metric and the human's verdict (positive, negative): "
    "the score that separates the two is a calibrated threshold.",
    ["metric", "human"],
    buckets=SCORE_BUCKETS,
    registry=REGISTRY,
)


class LabelsConfig(BaseModel):
    """Allow-lists for free-text Prometheus labels; empty = the first `max_values` seen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    services: list[str] = Field(default_factory=list)
    routes: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    max_values: int = Field(50, ge=1)
    max_pairs: int = Field(
        200,
        ge=1,
        description="Distinct (service, route) pairs; beyond, a new pair's route becomes `other`. Bounds the "
        "product, not only each label: the score histogram has ~25 series per pair and metric.",
    )
    version_from: Literal["service_version", "prompt_version", "model"] = Field(
        "service_version", description="The record field the `version` label of the score metrics shows."
    )
    versions: list[str] = Field(
        default_factory=list,
        description="Allow-list of `version` values (others become `other`); empty = the most recent "
        "`max_versions` per service.",
    )
    max_versions: int = Field(
        5,
        ge=1,
        description="Versions per service with their own series; a new one removes the series of the least "
        "recently scored, so a new deploy always gets its own label.",
    )


class LabelPolicy:
    """Maps free-text label values onto configured allow-lists; anything else becomes `other`.

    An empty allow-list admits the first `max_values` distinct values seen, then `other`: safe
    by default, without configuration.
    """

    def __init__(self, allowed: Iterable[str] = (), max_values: int = 50) -> None:
        self._allowed = set(allowed)
        self._fixed = bool(self._allowed)
        self._max_values = max_values

    def bound(self, value: str) -> str:
        if not value:
            return "unknown"
        if value in self._allowed:
            return value
        if not self._fixed and len(self._allowed) < self._max_values:
            self._allowed.add(value)
            return value
        return OTHER


class VersionPolicy:
    """Maps a version onto the `version` label: a fixed allow-list, else the `max_versions` versions per
    service scored most recently.

    Unlike `LabelPolicy`, a full set does not turn newcomers into `other`: a new deploy is exactly the
    value that must get its own series. `bound` returns the label and the version it evicted (whose
    series the exporter removes), and remembers when each version was first seen."""

    def __init__(self, allowed: Iterable[str] = (), max_versions: int = 5) -> None:
        self._allowed = frozenset(allowed)
        self._max_versions = max_versions
        self._recent: dict[str, OrderedDict[str, None]] = {}  # service -> versions, least recent first
        self._first_seen: OrderedDict[tuple[str, str], float] = OrderedDict()

    @classmethod
    def from_config(cls, labels: LabelsConfig) -> VersionPolicy:
        return cls(labels.versions, labels.max_versions)

    def bound(self, service: str, value: str) -> tuple[str, str | None]:
        """(label, evicted version or None) for a version of `service`."""
        if not value:
            return "unknown", None
        if self._allowed:
            return (value if value in self._allowed else OTHER), None
        recent = self._recent.setdefault(service, OrderedDict())
        evicted = None
        if value not in recent and len(recent) >= self._max_versions:
            evicted, _ = recent.popitem(last=False)
        recent[value] = None
        recent.move_to_end(value)
        return value, evicted

    def first_seen(self, service: str, version: str, now: float) -> float:
        """When `version` of `service` was first seen; kept across an eviction (bounded memory), so a
        version coming back is not mistaken for the newest."""
        key = (service, version)
        if key not in self._first_seen:
            self._first_seen[key] = now
            while len(self._first_seen) > 100 * self._max_versions:
                self._first_seen.popitem(last=False)
        return self._first_seen[key]
