"""Scores into Prometheus: one histogram observation and one outcome count per evaluation.

Exemplars carry the trace and anchor span ids, so a point in Grafana opens its trace; ids never
become label values. Service and route go through their allow-lists, and their pairs through
`labels.max_pairs`: fifty services times fifty routes would otherwise be 2,500 pairs of ~25 series
per metric. The `version` label (the record field `labels.version_from` names) goes through a
`VersionPolicy`: when a service's new version pushes out its least recently scored one, that
version's series are removed, so a deploy always gets its own series and their number stays bounded.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence

from collector.metrics import (
    EVALUATION_SCORE,
    EVALUATIONS,
    FAILURES,
    OTHER,
    VERSION_FIRST_SEEN,
    LabelPolicy,
    VersionPolicy,
)
from collector.records import RagRecord
from collector.stages import Evaluation

_NOT_A_VERSION = ("unknown", OTHER)  # no first-seen time: neither can be "the newest version"


class PrometheusExporter:
    def __init__(
        self,
        services: LabelPolicy,
        routes: LabelPolicy,
        max_pairs: int = 200,
        versions: VersionPolicy | None = None,
        version_from: str = "service_version",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._services, self._routes, self._max_pairs = services, routes, max_pairs
        self._pairs: set[tuple[str, str]] = set()
        self._versions, self._version_from = versions or VersionPolicy(), version_from
        self._clock = clock
        # (service, version) -> the (metric, route, outcome) series it has, to remove them on eviction
        self._series: dict[tuple[str, str], set[tuple[str, str, str]]] = {}
        self._lock = threading.Lock()

    def _labels(self, record: RagRecord) -> tuple[str, str]:
        """Service and route, each bounded by its allow-list, and the pair by `max_pairs`."""
        service, route = self._services.bound(record.service), self._routes.bound(record.route)
        if (service, route) not in self._pairs and len(self._pairs) >= self._max_pairs:
            route = OTHER
        self._pairs.add((service, route))
        return service, route

    def _version(self, service: str, record: RagRecord) -> str:
        """The bounded `version` label; removes the series of a version it evicts."""
        version, evicted = self._versions.bound(service, str(getattr(record, self._version_from, "") or ""))
        if evicted is not None:
            for metric, route, outcome in self._series.pop((service, evicted), ()):
                with contextlib.suppress(KeyError):
                    EVALUATIONS.remove(metric, service, route, evicted, outcome)
                with contextlib.suppress(KeyError):
                    EVALUATION_SCORE.remove(metric, service, route, evicted)
            with contextlib.suppress(KeyError):
                VERSION_FIRST_SEEN.remove(service, evicted)
        if version not in _NOT_A_VERSION:
            VERSION_FIRST_SEEN.labels(service, version).set(
                self._versions.first_seen(service, version, self._clock())
            )
        return version

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        exemplar = {"trace_id": record.trace_id, "span_id": record.anchor_span_id}
        with self._lock:  # an eviction and a new series of the same version must not interleave
            service, route = self._labels(record)
            version = self._version(service, record)
            series = self._series.setdefault((service, version), set())
            for evaluation in evaluations:
                outcome = evaluation.outcome.value
                series.add((evaluation.metric, route, outcome))
                EVALUATIONS.labels(evaluation.metric, service, route, version, outcome).inc(exemplar=exemplar)
                if evaluation.score is not None:
                    EVALUATION_SCORE.labels(evaluation.metric, service, route, version).observe(
                        evaluation.score, exemplar
                    )
                if evaluation.cause is not None:
                    FAILURES.labels(evaluation.metric, evaluation.cause, service).inc(exemplar=exemplar)

    def force_flush(self, timeout_s: float = 10.0) -> bool:
        return True

    @property
    def saturated(self) -> bool:
        return False

    def shutdown(self) -> None:
        pass
