"""The review stage's Prometheus metrics, declared once on ragpulse's registry.

`service` is bounded by the same allow-list as every other `service` label (`labels.services`).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from collector.metrics import REGISTRY

CORRECTIONS = Counter(
    "ragpulse_corrections",
    "Reviewers' corrections recorded on this replica's page, by metric and what the reviewer said of the "
    "outcome (right, wrong, unsaid: only claim verdicts were marked).",
    ["metric", "outcome"],
    registry=REGISTRY,
)
JUDGE_CORRECTION_AGREEMENT = Gauge(
    "ragpulse_judge_human_agreement_ratio",
    "Share of reviewers' corrections the judge's pass/fail agrees with, per metric, service and judge: "
    "thresholds=shipped with the metric's own threshold (on every correction), thresholds=fitted with the "
    "threshold refitted on the corrections (each judged by a fit made without it).",
    ["metric", "service", "judge", "thresholds"],
    registry=REGISTRY,
)
FITTED_THRESHOLD = Gauge(
    "ragpulse_judge_threshold",
    "The pass threshold in force per metric, service and judge: the refitted one where it beats the "
    "shipped one on held-out corrections, else the metric's own.",
    ["metric", "service", "judge"],
    registry=REGISTRY,
)
