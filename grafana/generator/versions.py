"""The quality dashboard's "Versions" row: each metric's pass ratio and mean score per version of the app.

The `version` label is the app's `service.version` (or its prompt version or model, `labels.version_from`).
Each version is its own series, so a deploy shows at once as a new line beside the previous version's,
over the same 6-hour window the RagpulseVersionRegression alert compares (with every route selected, the
panel's pass ratios are the alert's numbers).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import timeseries

from grafana.generator.common import METRIC, SERVICE_ROUTE, query, time_series

WINDOW = "6h"  # the window of RagpulseVersionRegression (deploy/prometheus/rules/ragpulse.rules.yml)
_SELECTOR = f'{SERVICE_ROUTE}, {METRIC}, version!~"|unknown|other"'
_BY = "service, version"


def _increase(selector: str) -> str:
    return f"sum by ({_BY}) (increase(ragpulse_evaluations_total{{{selector}}}[{WINDOW}]))"


def version_panel() -> timeseries.Panel:
    """One panel per metric of the Metric variable: pass ratio and mean score per service and version."""
    decided = _increase(f'{_SELECTOR}, outcome=~"passed|failed"')
    passed = _increase(f'{_SELECTOR}, outcome="passed"')
    mean = (
        f"sum by ({_BY}) (increase(ragpulse_evaluation_score_sum{{{_SELECTOR}}}[{WINDOW}]))"
        f" / (sum by ({_BY}) (increase(ragpulse_evaluation_score_count{{{_SELECTOR}}}[{WINDOW}])) > 0)"
    )
    return (
        time_series(
            "Versions: $metric",
            "Pass ratio (passed / decided) and mean score of the selected metric per service and "
            f"version over {WINDOW}: the window the version-regression alert compares. That alert "
            "warns when the newest version passes more than 15 points less often than the service's "
            "other versions (at least 20 evaluations each). Evaluations without a version are left out.",
            [
                query(f"({passed} or 0 * {decided}) / ({decided} > 0)", "pass ratio {{service}} {{version}}"),
                query(mean, "mean score {{service}} {{version}}", ref_id="B"),
            ],
            unit="percentunit",
            max_value=1,
        )
        .repeat("metric")
        .repeat_direction("h")
        .max_per_row(2)
    )
