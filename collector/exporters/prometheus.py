"""Scores into Prometheus: one histogram observation and one outcome count per evaluation.

Exemplars carry the trace and anchor span ids, so a point in Grafana opens its trace; ids never
become label values. Service, route and model go through the allow-list policy.
"""

from __future__ import annotations

from collections.abc import Sequence

from collector.metrics import EVALUATION_SCORE, EVALUATIONS, LabelPolicy
from collector.records import RagRecord
from collector.stages import Evaluation


class PrometheusExporter:
    def __init__(self, services: LabelPolicy, routes: LabelPolicy) -> None:
        self._services, self._routes = services, routes

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        service, route = self._services.bound(record.service), self._routes.bound(record.route)
        exemplar = {"trace_id": record.trace_id, "span_id": record.anchor_span_id}
        for evaluation in evaluations:
            EVALUATIONS.labels(evaluation.metric, service, route, evaluation.outcome.value).inc(
                exemplar=exemplar
            )
            if evaluation.score is not None:
                EVALUATION_SCORE.labels(evaluation.metric, service, route).observe(evaluation.score, exemplar)

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return True

    def shutdown(self) -> None:
        pass
