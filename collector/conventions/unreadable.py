"""Traces that held no RAG data, counted by service and reason where people look (/metrics, the page).

A trace ragpulse cannot read is the first thing a new user hits ("my traces are not scored"): counted
only as `no_rag_data`, the page said "no evaluations yet" while traces kept arriving. Each one is now
counted in `ragpulse_unreadable_traces_total{service,reason}` with the reason `conventions.read` names
(from the same reading of the spans as extraction: no second pass), the one `ragpulse inspect` prints.
Services are bounded like the score labels.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.labels import LabelPolicy
from collector.metrics import SAMPLING_DECISIONS, TRACES, UNREADABLE_TRACES
from collector.spans import Span


class UnreadableTraces:
    def __init__(self, services: LabelPolicy | None = None) -> None:
        self._services = services or LabelPolicy()

    def count(self, spans: Sequence[Span], reason: str) -> None:
        """Count one trace that gave no record (`conventions.read` named why) as a trace state, a
        sampling decision and by its reason."""
        TRACES.labels("no_rag_data").inc()
        SAMPLING_DECISIONS.labels("no_rag_data").inc()
        UNREADABLE_TRACES.labels(self._services.bound(service_of(spans)), reason).inc()


def service_of(spans: Sequence[Span]) -> str:
    """The service of the trace's root span (the app), else of its first span."""
    root = next((span for span in spans if span.is_root), spans[0] if spans else None)
    return root.service if root is not None else "unknown"
