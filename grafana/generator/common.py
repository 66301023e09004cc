"""Building blocks shared by the three ragpulse dashboards.

Every dashboard reads its data sources from template variables (so one JSON works in any Grafana, and the
provisioned data sources are only the default), and every panel is built through these helpers so units,
legends and exemplar settings stay consistent across dashboards.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders import dashboard, heatmap, prometheus, stat, table, timeseries
from grafana_foundation_sdk.builders.dashboard import Dashboard
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models import heatmap as heatmap_models
from grafana_foundation_sdk.models import prometheus as prometheus_models
from grafana_foundation_sdk.models.dashboard import (
    DashboardCursorSync,
    DataSourceRef,
    DataTransformerConfig,
    Threshold,
    ThresholdsMode,
    VariableOption,
    VariableRefresh,
    VariableSort,
)

# The schema the committed JSON targets: the SDK build for Grafana 11.6 writes schemaVersion 41.
GRAFANA_SCHEMA_VERSION = 41

PROMETHEUS = DataSourceRef(type_val="prometheus", uid="${datasource}")
TEMPO = DataSourceRef(type_val="tempo", uid="${tracing}")

# Uids of the provisioned data sources (grafana/provisioning/datasources/ragpulse.yaml); the dashboards'
# data-source variables default to them.
PROVISIONED_PROMETHEUS_UID = "ragpulse-prometheus"
PROVISIONED_TEMPO_UID = "ragpulse-tempo"

# Selector fragments for the variables of the quality dashboard.
SERVICE_ROUTE = 'service=~"$service", route=~"$route"'
METRIC = 'metric=~"$metric"'


def new_dashboard(uid: str, title: str, description: str) -> Dashboard:
    """A dashboard with ragpulse's defaults: last 6 hours, 30 s refresh, shared crosshair, and first among
    its variables the Prometheus data source every panel reads (`${datasource}`), so each dashboard only
    adds its own label variables."""
    return (
        Dashboard(title)
        .uid(uid)
        .description(description)
        .tags(["ragpulse"])
        .time("now-6h", "now")
        .refresh("30s")
        .timezone("browser")
        .tooltip(DashboardCursorSync.CROSSHAIR)
        .readonly()
        .link(
            dashboard.DashboardLink("ragpulse dashboards")
            .type("dashboards")
            .tags(["ragpulse"])
            .as_dropdown(True)
            .include_vars(False)
            .keep_time(True)
        )
        .with_variable(datasource_variable("datasource", "Metrics", "prometheus", PROVISIONED_PROMETHEUS_UID))
    )


def datasource_variable(name: str, label: str, plugin: str, default_uid: str) -> dashboard.DatasourceVariable:
    return (
        dashboard.DatasourceVariable(name)
        .label(label)
        .type(plugin)
        .current(VariableOption(text=default_uid, value=default_uid, selected=True))
    )


def label_variable(name: str, label: str, query: str) -> dashboard.QueryVariable:
    """A multi-select variable over a Prometheus label, "All" meaning any value (regex .*)."""
    return (
        dashboard.QueryVariable(name)
        .label(label)
        .datasource(PROMETHEUS)
        .query({"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery", "qryType": 1})
        .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(VariableSort.ALPHABETICAL_ASC)
        .multi(True)
        .include_all(True)
        .all_value(".*")
        .current(VariableOption(text="All", value="$__all", selected=True))
    )


def query(expr: str, legend: str = "", *, exemplar: bool = False, ref_id: str = "A") -> prometheus.Dataquery:
    return (
        prometheus.Dataquery()
        .expr(expr)
        .legend_format(legend or "__auto")
        .range()
        .exemplar(exemplar)
        .ref_id(ref_id)
        .datasource(PROMETHEUS)
    )


def sum_rate(metric: str, by: str = "", selector: str = "", function: str = "rate") -> str:
    """`sum by (<by>) (<function>(<metric>{<selector>}[$__rate_interval]))`, the shape of most panels."""
    grouping = f" by ({by})" if by else ""
    matchers = f"{{{selector}}}" if selector else ""
    return f"sum{grouping} ({function}({metric}{matchers}[$__rate_interval]))"


def rates_by(
    title: str,
    description: str,
    metric: str,
    label: str,
    selector: str = "",
    *,
    function: str = "rate",
    exemplar: bool = False,
    unit: str = "reqps",
    stacked: bool = True,
) -> timeseries.Panel:
    """A counter's rate split by `label`, one series (named by its value) per value, stacked: the
    "per second by outcome / cause / source" panels."""
    by = query(sum_rate(metric, label, selector, function), f"{{{{{label}}}}}", exemplar=exemplar)
    return time_series(title, description, [by], unit=unit, stacked=stacked)


def latency_quantiles(histogram: str, selector: str = "") -> list[prometheus.Dataquery]:
    """p50/p95/p99 of a latency histogram, one query each."""
    return [
        query(
            f"histogram_quantile({q}, {sum_rate(histogram + '_bucket', 'le', selector)})",
            f"p{round(q * 100)}",
            ref_id=ref,
        )
        for q, ref in ((0.5, "A"), (0.95, "B"), (0.99, "C"))
    ]


def _legend() -> common_builders.VizLegendOptions:
    return (
        common_builders.VizLegendOptions()
        .display_mode(common.LegendDisplayMode.TABLE)
        .placement(common.LegendPlacement.BOTTOM)
        .show_legend(True)
        .calcs(["lastNotNull", "min", "max"])
    )


def time_series(
    title: str,
    description: str,
    queries: list[prometheus.Dataquery],
    *,
    unit: str = "short",
    width: int = 12,
    min_value: float | None = 0,
    max_value: float | None = None,
    stacked: bool = False,
) -> timeseries.Panel:
    panel = (
        timeseries.Panel()
        .title(title)
        .description(description)
        .datasource(PROMETHEUS)
        .targets(queries)
        .unit(unit)
        .span(width)
        .height(8)
        .line_width(1)
        .fill_opacity(25 if stacked else 10)
        .show_points(common.VisibilityMode.NEVER)
        .legend(_legend())
        .tooltip(
            common_builders.VizTooltipOptions()
            .mode(common.TooltipDisplayMode.MULTI)
            .sort(common.SortOrder.DESCENDING)
        )
    )
    if min_value is not None:
        panel = panel.min(min_value)
    if max_value is not None:
        panel = panel.max(max_value)
    if stacked:
        panel = panel.stacking(common_builders.StackingConfig().mode(common.StackingMode.NORMAL))
    return panel


def threshold_line(panel: timeseries.Panel, value: float, *, below_is_bad: bool) -> timeseries.Panel:
    """Draw an alert threshold as a dashed line, so a panel shows where its alert would fire."""
    below, above = ("red", "green") if below_is_bad else ("green", "red")
    steps = [Threshold(value=None, color=below), Threshold(value=value, color=above)]
    return panel.thresholds(
        dashboard.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps(steps)
    ).thresholds_style(
        common_builders.GraphThresholdsStyleConfig().mode(common.GraphThresholdsStyleMode.DASHED)
    )


def share_panel(
    title: str,
    description: str,
    queries: list[prometheus.Dataquery],
    threshold: float,
    *,
    below_is_bad: bool,
    width: int = 12,
) -> timeseries.Panel:
    """A share (0 to 1) over time with its alert's threshold drawn as a dashed line."""
    panel = time_series(title, description, queries, unit="percentunit", max_value=1, width=width)
    return threshold_line(panel, threshold, below_is_bad=below_is_bad)


def stat_panel(
    title: str, description: str, expr: str, *, unit: str = "short", width: int = 6, legend: str = ""
) -> stat.Panel:
    return (
        stat.Panel()
        .title(title)
        .description(description)
        .datasource(PROMETHEUS)
        .with_target(query(expr, legend).instant())
        .unit(unit)
        .span(width)
        .height(4)
        .graph_mode(common.BigValueGraphMode.NONE)
        .color_mode(common.BigValueColorMode.VALUE)
        .reduce_options(common_builders.ReduceDataOptions().calcs(["lastNotNull"]).values(False))
    )


def ranking_table(
    title: str,
    description: str,
    expr: str,
    labels: list[str],
    value_name: str,
    *,
    unit: str = "short",
    decimals: int | None = None,
    width: int = 12,
) -> table.Panel:
    """An instant query shown as a table: one column per label in `labels`, then the value, largest first."""
    columns = {label: index for index, label in enumerate(labels)} | {"Value": len(labels)}
    panel = (
        table.Panel()
        .title(title)
        .description(description)
        .datasource(PROMETHEUS)
        .with_target(query(expr).instant().format(prometheus_models.PromQueryFormat.TABLE))
        .with_transformation(
            DataTransformerConfig(
                id_val="organize",
                options={
                    "excludeByName": {"Time": True},
                    "indexByName": columns,
                    "renameByName": {"Value": value_name},
                },
            )
        )
        .sort_by([common_builders.TableSortByFieldState().display_name(value_name).desc(True)])
        .unit(unit)
        .span(width)
        .height(8)
    )
    if decimals is not None:
        panel = panel.decimals(decimals)
    return panel


def score_heatmap(title: str, description: str, metric: str, width: int = 12) -> heatmap.Panel:
    """Score distribution from the histogram buckets; exemplars (one per observed score) open the trace."""
    expr = (
        f'sum by (le) (increase(ragpulse_evaluation_score_bucket{{metric="{metric}", {SERVICE_ROUTE}}}'
        "[$__rate_interval]))"
    )
    return (
        heatmap.Panel()
        .title(title)
        .description(description)
        .datasource(PROMETHEUS)
        .with_target(query(expr, "{{le}}", exemplar=True).format(prometheus_models.PromQueryFormat.HEATMAP))
        .span(width)
        .height(8)
        .calculate(False)
        .rows_frame(heatmap.RowsHeatmapOptions().layout(common.HeatmapCellLayout.LE))
        .y_axis(heatmap.YAxisConfig().unit("percentunit").decimals(2).min(0).max(1))
        .color(
            heatmap.HeatmapColorOptions()
            .mode(heatmap_models.HeatmapColorMode.SCHEME)
            .scheme("Oranges")
            .steps(64)
            .exponent(0.5)
            .fill("dark-orange")
            .reverse(False)
        )
        .cell_gap(1)
        .show_value(common.VisibilityMode.NEVER)
        .exemplars_color("rgba(255,0,255,0.7)")
        .mode(common.TooltipDisplayMode.SINGLE)
        .show_y_histogram()
        .show_legend()
    )


def row(title: str) -> dashboard.Row:
    return dashboard.Row(title)
