"""The pipeline's state for the page, read from the process's own Prometheus registry: traces received,
those with no RAG data and why (per service and reason), queue, lag, drops, judge errors, sampling, spend.

The counters and gauges that `/metrics` exposes are already the source of truth for queue depth,
lag, drops, judge errors, sampling and spend; reading them here (summing their samples) keeps the
page from growing a second set of counters that could disagree with Grafana.

A figure tied to a component this process does not run is None (the page shows no card for it):
the Kafka lag without a Kafka consumer, judge errors and spend without an LLM judge (the offline
judge makes no requests and spends nothing). Whether a component runs is read from the same registry:
its series exist once it started (a consumer with partitions, a judge that was asked once).
"""

from __future__ import annotations

from typing import Any

from prometheus_client.metrics import MetricWrapperBase

from collector.conventions import UNREADABLE
from collector.metrics import (
    CONSUMER_LAG,
    DROPPED,
    JUDGE_COST,
    JUDGE_REQUESTS,
    QUEUE_DEPTH,
    SAMPLING_DECISIONS,
    TRACES,
    UNREADABLE_TRACES,
)


def sample_sum(metric: MetricWrapperBase, suffix: str = "", **labels: str) -> float:
    """The sum of a metric's samples (`_total` for counters) whose labels include `labels`."""
    total = 0.0
    for family in metric.collect():
        for sample in family.samples:
            if sample.name.endswith(suffix) and labels.items() <= sample.labels.items():
                total += sample.value
    return total


def has_series(metric: MetricWrapperBase) -> bool:
    """Whether any labelled child of `metric` exists: the component that sets it is running."""
    return any(family.samples for family in metric.collect())


def judge_errors() -> float:
    """Judge requests whose outcome was anything but ok."""
    return sum(
        sample.value
        for family in JUDGE_REQUESTS.collect()
        for sample in family.samples
        if sample.name.endswith("_total") and sample.labels.get("outcome") != "ok"
    )


def pipeline_state() -> dict[str, Any]:
    """Queue, lag, drops, judge errors, sampled share and judge spend since this process started;
    None for the figures of a component this process does not run."""
    sampled = sample_sum(SAMPLING_DECISIONS, "_total", decision="sampled")
    decided = sample_sum(SAMPLING_DECISIONS, "_total") - sample_sum(
        SAMPLING_DECISIONS, "_total", decision="no_rag_data"
    )
    kafka, llm_judge = has_series(CONSUMER_LAG), has_series(JUDGE_REQUESTS)
    return {
        "traces_received": sample_sum(TRACES, "_total", state="assembled")
        + sample_sum(TRACES, "_total", state="evicted"),
        "no_rag_data": sample_sum(TRACES, "_total", state="no_rag_data"),
        "unreadable": unreadable_traces(),
        "queue_depth": sample_sum(QUEUE_DEPTH),
        "consumer_lag": sample_sum(CONSUMER_LAG) if kafka else None,
        "dropped": sample_sum(DROPPED, "_total"),
        "judge_errors": judge_errors() if llm_judge else None,
        "sampled_share": sampled / decided if decided else None,
        "judge_cost_usd": sample_sum(JUDGE_COST, "_total") if llm_judge else None,
    }


def unreadable_traces() -> list[dict[str, Any]]:
    """Traces with no RAG data, per service and reason, most first, each with what the reason means."""
    rows = [
        {
            "service": sample.labels["service"],
            "reason": sample.labels["reason"],
            "why": UNREADABLE.get(sample.labels["reason"], ""),
            "count": int(sample.value),
        }
        for family in UNREADABLE_TRACES.collect()
        for sample in family.samples
        if sample.name.endswith("_total") and sample.value
    ]
    return sorted(rows, key=lambda row: (-row["count"], row["service"], row["reason"]))
