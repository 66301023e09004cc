"""The page's own Prometheus metrics, declared once on ragpulse's registry.

The store bounds itself by deleting; an operator who sees the page's history shorter than the
retention window looks here to learn whether the size cap did it.
"""

from __future__ import annotations

from prometheus_client import Counter

from collector.metrics import REGISTRY

STORE_EVICTED = Counter(
    "ragpulse_store_evicted",
    "Evaluations deleted from the page's store, by reason (retention: older than page.retention_hours; "
    "size: over page.max_store_mb, oldest first).",
    ["reason"],
    registry=REGISTRY,
)
STORE_DROPPED = Counter(
    "ragpulse_store_dropped",
    "Evaluations the page's store did not keep, by reason (queue_full, invalid, write_error).",
    ["reason"],
    registry=REGISTRY,
)
RESULTS_READ = Counter(
    "ragpulse_results_read",
    "Documents read back from the results topic into the page's store, by outcome (stored, malformed).",
    ["outcome"],
    registry=REGISTRY,
)
