"""Read a running collector's /metrics the way Prometheus does (OpenMetrics, with exemplars)."""

from __future__ import annotations

import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field

from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


@dataclass
class Scrape:
    samples: list[Sample] = field(default_factory=list)

    def value(self, name: str, **labels: str) -> float:
        """Sum of the samples named `name` whose labels include `labels`."""
        return sum(s.value for s in self.samples if s.name == name and labels.items() <= s.labels.items())

    def mean_score(self, metric: str, **labels: str) -> float:
        total = self.value("ragpulse_evaluation_score_sum", metric=metric, **labels)
        count = self.value("ragpulse_evaluation_score_count", metric=metric, **labels)
        return total / count

    def exemplar_trace_ids(self, name: str = "ragpulse_evaluation_score_bucket") -> set[str]:
        return {s.exemplar.labels["trace_id"] for s in self.samples if s.name == name and s.exemplar}

    def by_label(self, name: str, label: str) -> dict[str, float]:
        out: dict[str, float] = defaultdict(float)
        for sample in self.samples:
            if sample.name == name:
                out[sample.labels.get(label, "")] += sample.value
        return dict(out)


def scrape(port: int) -> Scrape:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Accept": OPENMETRICS})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    return Scrape([s for family in text_string_to_metric_families(text) for s in family.samples])
