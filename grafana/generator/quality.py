"""The "RAG quality overview" dashboard: how good are the answers, per service and route.

Score panels plot the recorded 5-minute mean next to the raw histogram's 10th percentile with exemplars
enabled: each diamond is one evaluated answer, and clicking it opens that trace in the tracing data source
(the Prometheus data source links exemplar trace_id to Tempo, see grafana/provisioning).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import table, tempo, timeseries
from grafana_foundation_sdk.builders.dashboard import Dashboard

from grafana.generator.common import (
    PROVISIONED_PROMETHEUS_UID,
    PROVISIONED_TEMPO_UID,
    SERVICE_ROUTE,
    TEMPO,
    datasource_variable,
    label_variable,
    new_dashboard,
    query,
    row,
    score_heatmap,
    stat_panel,
    sum_rate,
    threshold_line,
    time_series,
)

UID = "ragpulse-quality"

# The alert thresholds of deploy/prometheus/rules/ragpulse.rules.yml, drawn on the matching panels.
HALLUCINATION_SPIKE_SHARE = 0.2
FAITHFULNESS_DROP_MEAN = 0.7
RELEVANCY_DROP_MEAN = 0.6

SCORE_PANELS = (
    (
        "faithfulness",
        "Faithfulness",
        "Share of the answer's claims supported by the retrieved context.",
        FAITHFULNESS_DROP_MEAN,
    ),
    (
        "answer_relevancy",
        "Answer relevancy",
        "Share of the answer's statements that address the question.",
        RELEVANCY_DROP_MEAN,
    ),
    (
        "contextual_relevancy",
        "Contextual relevancy",
        "Share of the retrieved context's statements relevant to the question (retriever quality).",
        RELEVANCY_DROP_MEAN,
    ),
    (
        "context_utilization",
        "Context utilization",
        "Rank-aware precision of the retrieved nodes against the answer: were the useful nodes ranked first?",
        None,
    ),
)

HEATMAP_METRICS = (
    ("faithfulness", "Faithfulness"),
    ("hallucination", "Hallucination (lower is better)"),
    ("answer_relevancy", "Answer relevancy"),
    ("contextual_relevancy", "Contextual relevancy"),
)


def _score_panel(metric: str, title: str, description: str, threshold: float | None) -> timeseries.Panel:
    selector = f'metric="{metric}", {SERVICE_ROUTE}'
    panel = time_series(
        title,
        f"{description} Mean over 5 minutes per service and route; the dotted p10 series carries exemplars "
        "(one point per evaluated answer): click one to open its trace.",
        [
            query(
                f"service_route_metric:ragpulse_evaluation_score:mean5m{{{selector}}}",
                "mean {{service}} {{route}}",
            ),
            query(
                "histogram_quantile(0.1, sum by (le, service, route) "
                f"(rate(ragpulse_evaluation_score_bucket{{{selector}}}[$__rate_interval])))",
                "p10 {{service}} {{route}}",
                exemplar=True,
                ref_id="B",
            ),
        ],
        unit="percentunit",
        max_value=1,
    )
    if threshold is not None:
        panel = threshold_line(panel, threshold, below_is_bad=True)
    return panel


def _failed_evaluations_table() -> table.Panel:
    traceql = (
        '{ span.gen_ai.evaluation.name =~ "faithfulness|hallucination" '
        '&& span.gen_ai.evaluation.score.label = "failed" }'
    )
    return (
        table.Panel()
        .title("Recent failed grounding evaluations (traces)")
        .description(
            "Evaluation spans with a failed faithfulness or hallucination verdict, newest first, "
            "from the tracing data source. Open a row to read the claims and reasons."
        )
        .datasource(TEMPO)
        .with_target(
            tempo.TempoQuery().ref_id("A").query_type("traceql").query(traceql).limit(20).datasource(TEMPO)
        )
        .span(24)
        .height(8)
    )


def build() -> Dashboard:
    passed_share = (
        "sum by (metric) (service_route_metric:ragpulse_evaluations_passed:ratio_rate5m{%s}"
        " * service_route_metric:ragpulse_evaluations_decided:rate5m{%s})"
        " / sum by (metric) (service_route_metric:ragpulse_evaluations_decided:rate5m{%s})"
    ) % ((SERVICE_ROUTE,) * 3)
    dash = (
        new_dashboard(
            UID,
            "RAG quality overview",
            "Faithfulness, hallucination and relevancy of RAG answers as judged by ragpulse.",
        )
        .with_variable(datasource_variable("datasource", "Metrics", "prometheus", PROVISIONED_PROMETHEUS_UID))
        .with_variable(datasource_variable("tracing", "Traces", "tempo", PROVISIONED_TEMPO_UID))
        .with_variable(
            label_variable("service", "Service", "label_values(ragpulse_evaluations_total, service)")
        )
        .with_variable(
            label_variable(
                "route", "Route", 'label_values(ragpulse_evaluations_total{service=~"$service"}, route)'
            )
        )
        .with_row(row("Now"))
        .with_panel(
            stat_panel(
                "Pass rate by metric (last 5 m)",
                "Passed / (passed + failed) per metric over the selected services and routes, "
                "weighted by volume.",
                passed_share,
                unit="percentunit",
                width=12,
                legend="{{metric}}",
            )
            .min(0)
            .max(1)
        )
        .with_panel(
            stat_panel(
                "Grounding failures (last 5 m)",
                "Share of failed faithfulness and hallucination evaluations: the hallucination-spike alert "
                f"fires above {HALLUCINATION_SPIKE_SHARE:.0%} over 10 minutes with at least 20 evaluations.",
                f"max(service_route:ragpulse_grounding_failure:ratio_rate5m{{{SERVICE_ROUTE}}})",
                unit="percentunit",
            )
            .min(0)
            .max(1)
        )
        .with_panel(
            stat_panel(
                "Evaluations per second",
                "All evaluation outcomes (passed, failed, error, unmeasured) across the selection.",
                f"sum(rate(ragpulse_evaluations_total{{{SERVICE_ROUTE}}}[5m]))",
                unit="reqps",
            )
        )
        .with_row(row("Scores over time"))
        .with_panel(
            threshold_line(
                time_series(
                    "Hallucination rate",
                    "Share of failed faithfulness and hallucination evaluations per service and route (5 m). "
                    "The dashed line is the hallucination-spike alert threshold.",
                    [
                        query(
                            f"service_route:ragpulse_grounding_failure:ratio_rate5m{{{SERVICE_ROUTE}}}",
                            "{{service}} {{route}}",
                        )
                    ],
                    unit="percentunit",
                    max_value=1,
                ),
                HALLUCINATION_SPIKE_SHARE,
                below_is_bad=False,
            )
        )
    )
    for metric, title, description, threshold in SCORE_PANELS:
        dash = dash.with_panel(_score_panel(metric, title, description, threshold))
    dash = (
        dash.with_row(row("Pass rates and outcomes"))
        .with_panel(
            time_series(
                "Pass rate per metric",
                "Passed / (passed + failed) per metric, service and route over 5 minutes.",
                [
                    query(
                        f"service_route_metric:ragpulse_evaluations_passed:ratio_rate5m{{{SERVICE_ROUTE}}}",
                        "{{metric}} {{service}} {{route}}",
                    )
                ],
                unit="percentunit",
                max_value=1,
            )
        )
        .with_panel(
            time_series(
                "Evaluation outcomes",
                "Evaluations per second by outcome. error: the judge failed; "
                "unmeasured: required input missing.",
                [
                    query(
                        sum_rate("ragpulse_evaluations_total", "outcome", SERVICE_ROUTE),
                        "{{outcome}}",
                    )
                ],
                unit="reqps",
                stacked=True,
            )
        )
        .with_row(row("Score distributions"))
    )
    for metric, title in HEATMAP_METRICS:
        dash = dash.with_panel(
            score_heatmap(
                f"{title}: score distribution",
                f"How many {metric} scores fell in each 0.05-wide bucket; exemplars mark single evaluations.",
                metric,
            )
        )
    return dash.with_row(row("Traces")).with_panel(_failed_evaluations_table()).build()
