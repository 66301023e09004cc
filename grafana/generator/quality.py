"""The "RAG quality overview" dashboard: how good are the answers, per service and route.

Score panels plot the recorded 5-minute mean next to the raw histogram's 10th percentile with exemplars
enabled: each diamond is one evaluated answer, and clicking it opens that trace in the tracing data source
(the Prometheus data source links exemplar trace_id to Tempo, see grafana/provisioning).

Failure causes say whom to call: the retriever's owners (no, irrelevant or incomplete context) or the
prompt's (unsupported or contradicted claims, off-topic answers, refusals, ...), the same split the
alerts route on. Which documents are behind the failures is on ragpulse's own page (hotspots link).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard, table, tempo, timeseries
from grafana_foundation_sdk.builders.dashboard import Dashboard
from grafana_foundation_sdk.models.dashboard import DashboardLinkType, VariableOption

from grafana.generator.common import (
    METRIC,
    PROVISIONED_TEMPO_UID,
    SERVICE_ROUTE,
    TEMPO,
    datasource_variable,
    label_variable,
    new_dashboard,
    query,
    ranking_table,
    rates_by,
    row,
    score_heatmap,
    share_panel,
    stat_panel,
    threshold_line,
    time_series,
)
from grafana.generator.task_panels import task_panels
from grafana.generator.versions import version_panel

UID = "ragpulse-quality"

# The alert thresholds of deploy/prometheus/rules/ragpulse.rules.yml, drawn on the matching panels.
HALLUCINATION_SPIKE_SHARE = 0.2
FAITHFULNESS_DROP_MEAN = 0.7
RELEVANCY_DROP_MEAN = 0.6
STAGE_FAILURE_SHARE = 0.2  # RagpulseRetrievalFailures and RagpulseGenerationFailures

# ragpulse's own page (on its metrics port) lists the documents behind failures: document ids are unbounded,
# so they are never Prometheus labels. Operators set the address of their ragpulse in this variable.
SIDECAR_DEFAULT_URL = "http://localhost:9464"
HOTSPOTS_URL = "${sidecar}/#hotspots"

# Failures are counted per service, metric and cause: there is no route label to filter on.
FAILURES_SELECTOR = f'service=~"$service", {METRIC}'

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


def _score_panel(
    metric_matcher: str, title: str, description: str, threshold: float | None
) -> timeseries.Panel:
    selector = f"{metric_matcher}, {SERVICE_ROUTE}"
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


def _selected_metric_panel() -> timeseries.Panel:
    """One score panel per metric chosen in the `metric` variable (Grafana repeats it), so every metric
    ragpulse scores has a panel, not only the four above."""
    return (
        _score_panel(
            METRIC,
            "Score: $metric",
            "Scores of the selected metric (one panel per value of the Metric variable).",
            None,
        )
        .repeat("metric")
        .repeat_direction("h")
        .max_per_row(2)
    )


def _hotspots_link() -> dashboard.DashboardLink:
    return (
        dashboard.DashboardLink("Knowledge-base hotspots (ragpulse page)")
        .type(DashboardLinkType.LINK)
        .url(HOTSPOTS_URL)
        .tooltip(
            "Documents most often behind failed evaluations, on ragpulse's own page "
            '(its address is the "ragpulse page" variable).'
        )
        .icon("external link")
        .target_blank(True)
        .include_vars(False)
        .keep_time(False)
    )


def _failure_causes_panel() -> timeseries.Panel:
    return rates_by(
        "Failure causes",
        "Failed evaluations per second by cause, for the selected services and metrics (failures have no "
        "route). Retrieval causes: no_context, irrelevant_context, incomplete_context; generation causes: "
        "unsupported_claim, contradicted_claim, off_topic, refusal, incorrect_answer, criteria. Exemplars "
        "open a failing trace.",
        "ragpulse_failures_total",
        "cause",
        FAILURES_SELECTOR,
        exemplar=True,
    )


def _stage_share_panel() -> timeseries.Panel:
    return share_panel(
        "Failure share by owner",
        "Share of each service's decided evaluations (all metrics) that failed for a retrieval or a "
        "generation cause over 15 minutes. The dashed line is the threshold of the alerts routed to the "
        "retrieval owners and to the prompt owners (with at least 30 evaluations).",
        [
            query(
                'service_stage:ragpulse_failure:ratio15m{service=~"$service", stage=~"retrieval|generation"}',
                "{{service}} {{stage}}",
            )
        ],
        STAGE_FAILURE_SHARE,
        below_is_bad=False,
        width=24,
    )


def _top_causes_table() -> table.Panel:
    expr = (
        "topk by (service) (5, sum by (service, cause) "
        f"(increase(ragpulse_failures_total{{{FAILURES_SELECTOR}}}[$__range])))"
    )
    return ranking_table(
        "Top failure causes per service",
        "The five most frequent causes of failed evaluations per service over the dashboard's time range. "
        "Which documents are behind them: the hotspots link (ragpulse's page).",
        expr,
        ["service", "cause"],
        "failed evaluations",
        decimals=0,
    ).links([_hotspots_link()])


def _failed_evaluations_table() -> table.Panel:
    # Evaluation spans carry the outcome in the same words as the Prometheus `outcome` label.
    traceql = (
        '{ span.gen_ai.evaluation.name =~ "$metric" && span.gen_ai.evaluation.score.label = "failed" }'
        " | select(span.ragpulse.evaluation.cause)"
    )
    return (
        table.Panel()
        .title("Recent failed evaluations (traces)")
        .description(
            "Evaluation spans with a failed verdict for the selected metrics, newest first, from the tracing "
            "data source, with their failure cause. Open a row to read the claims and reasons."
        )
        .datasource(TEMPO)
        .with_target(
            tempo.TempoQuery().ref_id("A").query_type("traceql").query(traceql).limit(20).datasource(TEMPO)
        )
        .span(24)
        .height(8)
    )


def build() -> Dashboard:
    selected = f"{SERVICE_ROUTE}, {METRIC}"
    passed_share = (
        "sum by (metric) (service_route_metric:ragpulse_evaluations_passed:ratio_rate5m{%s}"
        " * service_route_metric:ragpulse_evaluations_decided:rate5m{%s})"
        " / sum by (metric) (service_route_metric:ragpulse_evaluations_decided:rate5m{%s})"
    ) % ((selected,) * 3)
    dash = (
        new_dashboard(
            UID,
            "RAG quality overview",
            "Faithfulness, hallucination and relevancy of RAG answers as judged by ragpulse.",
        )
        .with_variable(datasource_variable("tracing", "Traces", "tempo", PROVISIONED_TEMPO_UID))
        .with_variable(
            label_variable("service", "Service", "label_values(ragpulse_evaluations_total, service)")
        )
        .with_variable(
            label_variable(
                "route", "Route", 'label_values(ragpulse_evaluations_total{service=~"$service"}, route)'
            )
        )
        .with_variable(
            label_variable(
                "metric", "Metric", 'label_values(ragpulse_evaluations_total{service=~"$service"}, metric)'
            )
        )
        .with_variable(
            dashboard.TextBoxVariable("sidecar")
            .label("ragpulse page")
            .description("Address of ragpulse's metrics port, for the hotspots link.")
            .default_value(SIDECAR_DEFAULT_URL)
            .current(VariableOption(text=SIDECAR_DEFAULT_URL, value=SIDECAR_DEFAULT_URL, selected=True))
        )
        .link(_hotspots_link())
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
                f"sum(rate(ragpulse_evaluations_total{{{selected}}}[5m]))",
                unit="reqps",
            )
        )
        .with_row(row("Scores over time"))
        .with_panel(
            share_panel(
                "Hallucination rate",
                "Share of failed faithfulness and hallucination evaluations per service and route (5 m). "
                "The dashed line is the hallucination-spike alert threshold.",
                [
                    query(
                        f"service_route:ragpulse_grounding_failure:ratio_rate5m{{{SERVICE_ROUTE}}}",
                        "{{service}} {{route}}",
                    )
                ],
                HALLUCINATION_SPIKE_SHARE,
                below_is_bad=False,
            )
        )
    )
    for metric, title, description, threshold in SCORE_PANELS:
        dash = dash.with_panel(_score_panel(f'metric="{metric}"', title, description, threshold))
    dash = (
        dash.with_row(row("Failure causes"))
        .with_panel(_failure_causes_panel())
        .with_panel(_top_causes_table())
        .with_panel(_stage_share_panel())
        .with_row(row("Selected metrics"))
        .with_panel(_selected_metric_panel())
        .with_row(row("Pass rates and outcomes"))
        .with_panel(
            time_series(
                "Pass rate per metric",
                "Passed / (passed + failed) per metric, service and route over 5 minutes.",
                [
                    query(
                        f"service_route_metric:ragpulse_evaluations_passed:ratio_rate5m{{{selected}}}",
                        "{{metric}} {{service}} {{route}}",
                    )
                ],
                unit="percentunit",
                max_value=1,
            )
        )
        .with_panel(
            rates_by(
                "Evaluation outcomes",
                "Evaluations per second by outcome. error: the judge failed; "
                "unmeasured: required input missing.",
                "ragpulse_evaluations_total",
                "outcome",
                selected,
            )
        )
        .with_row(row("Retrieval against reference ids, citations, refusals, conversations"))
    )
    for panel in task_panels():
        dash = dash.with_panel(panel)
    dash = dash.with_row(row("Versions")).with_panel(version_panel()).with_row(row("Score distributions"))
    for metric, title in HEATMAP_METRICS:
        dash = dash.with_panel(
            score_heatmap(
                f"{title}: score distribution",
                f"How many {metric} scores fell in each 0.05-wide bucket; exemplars mark single evaluations.",
                metric,
            )
        )
    return dash.with_row(row("Traces")).with_panel(_failed_evaluations_table()).build()
