"""`ragpulse run`'s periodic one-line summary: are traces arriving, and are they scored?

Read from the Prometheus metrics the pipeline already keeps (no second set of counters); totals since
start, so two lines can be compared by eye. `summary_interval_s: 0` or `--quiet` turns it off.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict

from collector.metrics import CONSUMER_LAG, DROPPED, EVALUATIONS, SPANS_RECEIVED, TRACES

logger = logging.getLogger("ragpulse")


def _by_label(metric: object, label: str) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for family in metric.collect():  # type: ignore[attr-defined]
        for sample in family.samples:
            if sample.name.endswith("_total") or sample.name == family.name:
                totals[sample.labels.get(label, "")] += sample.value
    return totals


def summary_line(judge: str) -> str:
    spans = sum(_by_label(SPANS_RECEIVED, "source").values())
    traces = _by_label(TRACES, "state")
    outcomes = _by_label(EVALUATIONS, "outcome")
    dropped = {reason: n for reason, n in _by_label(DROPPED, "reason").items() if n}
    lag = sum(_by_label(CONSUMER_LAG, "partition").values())
    parts = [
        f"{spans:.0f} spans, {traces['assembled'] + traces['evicted']:.0f} traces "
        f"({traces['extracted']:.0f} with RAG data, {traces['no_rag_data']:.0f} without, "
        f"{traces['invalid']:.0f} invalid"
        + (f", {traces['not_sampled']:.0f} not sampled, unread" if traces["not_sampled"] else "")
        + ")",
        f"{sum(outcomes.values()):.0f} evaluations ({outcomes['failed']:.0f} failed, "
        f"{outcomes['error']:.0f} errors, {outcomes['unmeasured']:.0f} unmeasured)",
        "dropped " + (", ".join(f"{r}={n:.0f}" for r, n in sorted(dropped.items())) if dropped else "none"),
        f"judge {judge}",
    ]
    if next(iter(CONSUMER_LAG.collect())).samples:
        parts.append(f"Kafka lag {lag:.0f}")
    return "totals: " + "; ".join(parts)


async def log_summaries(interval_s: float, judge: str) -> None:
    while True:
        await asyncio.sleep(interval_s)
        logger.info(summary_line(judge))
