"""Traces that held no RAG data, counted by service and reason where people look (/metrics, the page).

A trace ragpulse cannot read is the first thing a new user hits ("my traces are not scored"): counted
only as `no_rag_data`, the page said "no evaluations yet" while traces kept arriving. Each one is now
counted in `ragpulse_unreadable_traces_total{service,reason}` with the reason `conventions.unreadable`
names, the one `ragpulse inspect` prints for that trace. Services are bounded like the score labels.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector import conventions
from collector.conventions import ExtractionConfig
from collector.labels import LabelPolicy
from collector.metrics import SAMPLING_DECISIONS, TRACES, UNREADABLE_TRACES
from collector.spans import Span


class UnreadableTraces:
    def __init__(self, extraction: ExtractionConfig, services: LabelPolicy | None = None) -> None:
        self._extraction, self._services = extraction, services or LabelPolicy()

    def count(self, spans: Sequence[Span]) -> str:
        """Count one trace that gave no record (as a trace state, a sampling decision and by why); its
        reason."""
        TRACES.labels("no_rag_data").inc()
        SAMPLING_DECISIONS.labels("no_rag_data").inc()
        reason = conventions.unreadable(spans, self._extraction)
        UNREADABLE_TRACES.labels(self._services.bound(service_of(spans)), reason).inc()
        return reason


def service_of(spans: Sequence[Span]) -> str:
    """The service of the trace's root span (the app), else of its first span."""
    root = next((span for span in spans if span.is_root), spans[0] if spans else None)
    return root.service if root is not None else "unknown"
