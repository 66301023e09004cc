"""Every Prometheus metric ragpulse exports, declared once (names from DESIGN.md).

The hot path is `METRIC.labels(...).inc()`. Free-text label values (service, route, model) pass
through `LabelPolicy.bound`, so a misbehaving app can never create unbounded series.
"""

from __future__ import annotations

from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

from collector.labels import OutcomeCounter

REGISTRY = CollectorRegistry(auto_describe=True)
# No `<counter>_created` / `<histogram>_created` series: each is one more series per label set that
# Prometheus stores (a gauge, unless its created-timestamp feature is on), a fifth of the score metrics'
# series, and no rule or dashboard reads them. Process-wide: imported before anything is scraped.
disable_created_metrics()

SCORE_BUCKETS = tuple(round(0.05 * i, 2) for i in range(1, 21))  # per metric only (feedback calibration)
# The score histogram has a set of these per (metric, service, route, version): 0.1 apart, half the
# series 0.05 apart made (docs/metrics.md counts them).
EVALUATION_SCORE_BUCKETS = tuple(round(0.1 * i, 1) for i in range(1, 11))
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

BUILD_INFO = Gauge("ragpulse_build_info", "ragpulse version (always 1).", ["version"], registry=REGISTRY)

# Scores
EVALUATION_SCORE = Histogram(
    "ragpulse_evaluation_score",
    "Evaluation scores (0..1) per metric; exemplars link to the trace.",
    ["metric", "service", "route", "version"],
    buckets=EVALUATION_SCORE_BUCKETS,
    registry=REGISTRY,
)
EVALUATIONS = OutcomeCounter(
    "ragpulse_evaluations",
    "Evaluations by outcome (passed, failed, error, unmeasured).",
    ["metric", "service", "route", "version", "outcome"],
    registry=REGISTRY,
    outcomes=("passed", "failed"),  # what the alerts' ratios read: both exist from the first evaluation
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
    "with the largest value. Removed with the version's series once it is idle (`labels.version_idle_s`).",
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
    "Traces by assembly state (assembled, evicted, extracted, no_rag_data, invalid; not_sampled: dropped "
    "by sampling on the trace id before it was read).",
    ["state"],
    registry=REGISTRY,
)
UNREADABLE_TRACES = Counter(
    "ragpulse_unreadable_traces",
    'Traces that gave no RAG record (ragpulse_traces_total{state="no_rag_data"}), by service and why: '
    "not_rag, no_output, no_context, prompt_context_off, no_question (`ragpulse inspect` explains one).",
    ["service", "reason"],
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
    "Records behind the partition end, from the consumer's position (what was read).",
    ["topic", "partition"],
    registry=REGISTRY,
)
CONSUMER_COMMITTED_LAG = Gauge(
    "ragpulse_kafka_consumer_committed_lag",
    "Records behind the partition end, from the group's committed offset (what is done): it grows while "
    "commits wait on an exporter, a dead letter or the judge, even when the position keeps up.",
    ["topic", "partition"],
    registry=REGISTRY,
)
EVALUATIONS_DEFERRED = Counter(
    "ragpulse_evaluations_deferred",
    "Evaluations put back in the queue to be tried again later, by reason (circuit_open: the judge is "
    "failing; judge_error: it answered with errors). Not a loss: after evaluation.judge_retry_for_s a "
    "record still unscored is exported with outcome error.",
    ["reason"],
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
    "Cascade outcomes (offline_only, escalated, llm_only: metrics the offline judge cannot judge, "
    "escalation_skipped: doubtful offline verdicts kept while the LLM judge's circuit is open).",
    ["stage"],
    registry=REGISTRY,
)
JUDGE_INPUT_REWRITES = Counter(
    "ragpulse_judge_input_rewrites",
    "What was masked or trimmed before a case left for an external judge, by what (email_masked, "
    "phone_masked, card_masked, iban_masked, redacted_masked, passage_cut, passage_left_out).",
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
    "Evaluations (or dead letters) an exporter failed to deliver, by exporter (otlp, otlp_logs, kafka, "
    "phoenix, store, dead_letters).",
    ["exporter"],
    registry=REGISTRY,
)
KAFKA_PRODUCER_REBUILDS = Counter(
    "ragpulse_kafka_producer_rebuilds",
    "Kafka producers closed and built again because a delivery outlived its deadline (delivery_timeout_ms "
    "plus a grace) with no answer, by writer (results, dead-letters); their unconfirmed records are resent.",
    ["writer"],
    registry=REGISTRY,
)
DEAD_LETTERS_OVERSIZE = Counter(
    "ragpulse_dead_letters_oversize",
    "Dead letters the topic refused as too large, by what became of them (cut: written with the payload cut "
    "to fit, headers kept; parked: not even an empty payload fits, counted and logged, the offset moves on).",
    ["outcome"],
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

# Judge canary (collector/feedback/canary.py): a frozen golden set re-judged on a schedule
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

# Human feedback (collector/feedback/agreement.py): users' thumbs or scores joined to the judge's verdicts
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


# Receivers: connections and requests refused before any span was read (otlp = HTTP, otlp_grpc).
RejectReason = Literal[
    "connection_cap",
    "client_cap",
    "timeout",
    "bad_framing",
    "too_large",
    "bad_body",
    "bad_content_type",
    "shutting_down",
]
# OTLP metrics an app sends along with its traces (one endpoint for every signal): answered, not kept.
OTLP_METRIC_POINTS_DROPPED = Counter(
    "ragpulse_otlp_metric_points_dropped",
    "Metric data points received on OTLP (/v1/metrics, MetricsService/Export) and dropped: ragpulse "
    "evaluates traces and logs, and answers metrics with success so an app's exporter logs no errors.",
    ["receiver"],
    registry=REGISTRY,
)
RECEIVER_REJECTED = Counter(
    "ragpulse_receiver_rejected",
    "Connections and requests a receiver refused, by reason: connection_cap, client_cap (over "
    "otlp.max_connections, otlp.max_connections_per_client: 503), timeout (headers or body too slow), "
    "bad_framing (400), too_large (413), bad_body (undecodable), bad_content_type (415), shutting_down.",
    ["receiver", "reason"],
    registry=REGISTRY,
)


# Judge input: texts cut before they left for an external judge (judge.outbound.max_text_chars).
JUDGE_INPUT_TRUNCATED = Counter(
    "ragpulse_judge_input_truncated",
    "Texts cut at judge.outbound.max_text_chars before a case left for an external judge, by field "
    "(input, actual_output, expected_output, baseline_output, turn); passages: "
    "ragpulse_judge_input_rewrites_total{what=passage_cut}.",
    ["field"],
    registry=REGISTRY,
)


# Judge replies: verdict lists that did not line up with the items asked about (evaluators' matching).
JUDGE_REPLY_MISMATCHES = Counter(
    "ragpulse_judge_reply_mismatches",
    "Metric results whose judge reply did not line up with the items asked about: an item left without "
    "a verdict (unmeasured, the rest scored; error when none matched), a verdict about no item "
    "(ignored), or verdicts out of order (placed by the index or text they echo).",
    ["metric"],
    registry=REGISTRY,
)
