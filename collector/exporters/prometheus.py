"""Scores into Prometheus: one histogram observation and one outcome count per evaluation.

Exemplars carry the trace and anchor span ids, so a point in Grafana opens its trace; ids never
become label values. Service and route go through their allow-lists, and their pairs through
`labels.max_pairs`: fifty services times fifty routes would otherwise be 2,500 pairs of 15 series per
metric (13 of the score histogram with its ten default buckets, 2 outcome counts). The `version` label
(the record field `labels.version_from` names) goes through a `VersionPolicy`: up to
`labels.max_versions` active versions per service have their own label, a newcomer beyond them is
`other`. No series is removed while it may change: only a version idle for `labels.version_idle_s`
loses its series (Prometheus holds their final values), freeing its slot for the next deploy. So every
count reaches /metrics under some label, and the series stay bounded.

The registry is written for a scrape by `collector.exporters.exposition`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence

from collector.labels import OTHER, LabelPolicy, VersionPolicy
from collector.metrics import EVALUATION_SCORE, EVALUATIONS, FAILURES, VERSION_FIRST_SEEN
from collector.records import RagRecord
from collector.stages import Evaluation, InProcessExporter

_NOT_A_VERSION = ("unknown", OTHER)  # no first-seen time: neither can be "the newest version"


class PrometheusExporter(InProcessExporter):
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
        # (service, version) -> the (metric, route, outcome) series it has, to remove them once idle
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
        """The bounded `version` label; removes the series of the service's versions gone idle."""
        now = self._clock()
        version, idle = self._versions.bound(service, str(getattr(record, self._version_from, "") or ""), now)
        for gone in idle:
            for metric, route, outcome in self._series.pop((service, gone), ()):
                with contextlib.suppress(KeyError):
                    EVALUATIONS.remove(metric, service, route, gone, outcome)
                with contextlib.suppress(KeyError):
                    EVALUATION_SCORE.remove(metric, service, route, gone)
            with contextlib.suppress(KeyError):
                VERSION_FIRST_SEEN.remove(service, gone)
        if version not in _NOT_A_VERSION:
            VERSION_FIRST_SEEN.labels(service, version).set(self._versions.first_seen(service, version, now))
        return version

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        exemplar = {"trace_id": record.trace_id, "span_id": record.anchor_span_id}
        with self._lock:  # a removal and a new series of the same version must not interleave
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
