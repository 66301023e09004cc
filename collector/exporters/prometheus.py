"""Scores into Prometheus: one histogram observation and one outcome count per evaluation.

Exemplars carry the trace and anchor span ids, so a point in Grafana opens its trace; ids never
become label values. Service and route go through their allow-lists, and their pairs through
`labels.max_pairs`: fifty services times fifty routes would otherwise be 2,500 pairs of ~25 series
per metric.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.metrics import EVALUATION_SCORE, EVALUATIONS, FAILURES, OTHER, LabelPolicy
from collector.records import RagRecord
from collector.stages import Evaluation


class PrometheusExporter:
    def __init__(self, services: LabelPolicy, routes: LabelPolicy, max_pairs: int = 200) -> None:
        self._services, self._routes, self._max_pairs = services, routes, max_pairs
        self._pairs: set[tuple[str, str]] = set()

    def _labels(self, record: RagRecord) -> tuple[str, str]:
        """Service and route, each bounded by its allow-list, and the pair by `max_pairs`."""
        service, route = self._services.bound(record.service), self._routes.bound(record.route)
        if (service, route) not in self._pairs and len(self._pairs) >= self._max_pairs:
            route = OTHER
        self._pairs.add((service, route))
        return service, route

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        service, route = self._labels(record)
        exemplar = {"trace_id": record.trace_id, "span_id": record.anchor_span_id}
        for evaluation in evaluations:
            EVALUATIONS.labels(evaluation.metric, service, route, evaluation.outcome.value).inc(
                exemplar=exemplar
            )
            if evaluation.score is not None:
                EVALUATION_SCORE.labels(evaluation.metric, service, route).observe(evaluation.score, exemplar)
            if evaluation.cause is not None:
                FAILURES.labels(evaluation.metric, evaluation.cause, service).inc(exemplar=exemplar)

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return True

    @property
    def saturated(self) -> bool:
        return False

    def shutdown(self) -> None:
        pass
