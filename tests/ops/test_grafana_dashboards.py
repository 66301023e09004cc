"""The committed dashboards are the generator's output, match Grafana's own types, and use real names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from evaluators import metric_names
from grafana.generator.common import PROVISIONED_PROMETHEUS_UID, PROVISIONED_TEMPO_UID
from grafana.generator.render import DASHBOARDS_DIR, rendered
from grafana.generator.task_panels import TASK_PANELS
from tests.ops.tools import GRAFANA, REPO, RULES_FILE, require_binary, run

VALIDATE_DIR = GRAFANA / "validate"
PROVISIONING = GRAFANA / "provisioning"
# Every ragpulse_* metric of DESIGN.md (histograms are queried through their _bucket/_sum/_count series).
KNOWN_METRICS = {
    "ragpulse_evaluation_score", "ragpulse_evaluations_total", "ragpulse_spans_received_total",
    "ragpulse_traces_total", "ragpulse_sampling_decisions_total", "ragpulse_dropped_total",
    "ragpulse_dead_letters_total", "ragpulse_queue_depth", "ragpulse_kafka_consumer_lag",
    "ragpulse_end_to_end_seconds", "ragpulse_judge_requests_total", "ragpulse_judge_tokens_total",
    "ragpulse_judge_cost_usd_total", "ragpulse_judge_latency_seconds",
    "ragpulse_judge_budget_remaining_ratio", "ragpulse_cascade_total", "ragpulse_build_info",
    "ragpulse_failures_total", "ragpulse_judge_canary_agreement_ratio", "ragpulse_feedback_judge_score",
    "ragpulse_judge_human_agreement_total",
}  # fmt: skip


def _dashboards() -> dict[str, dict]:
    return {path.name: json.loads(path.read_text()) for path in sorted(DASHBOARDS_DIR.glob("*.json"))}


def _panels(dashboard: dict) -> list[dict]:
    return [panel for panel in dashboard["panels"] if panel["type"] != "row"]


def _exprs(dashboard: dict) -> list[str]:
    return [t["expr"] for panel in _panels(dashboard) for t in panel.get("targets", []) if "expr" in t]


@pytest.fixture(scope="session")
def validator_installed() -> Path:
    """npm-installs the pinned @grafana/schema + typescript (grafana/validate/install.sh) once."""
    require_binary("npm", "install Node.js 20+ and npm (Debian: apt-get install nodejs npm)")
    if not (VALIDATE_DIR / "node_modules" / "typescript").is_dir():
        result = run(["bash", str(VALIDATE_DIR / "install.sh")], timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
    return VALIDATE_DIR


def test_committed_json_is_the_generator_output() -> None:
    committed = {path.name: path.read_text() for path in DASHBOARDS_DIR.glob("*.json")}
    assert committed == rendered(), "stale dashboards: run `python -m grafana.generator` and commit the JSON"


def test_dashboards_type_check_against_grafana_schema(validator_installed: Path) -> None:
    result = run(["node", "check.mjs"], cwd=validator_installed)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 dashboards match @grafana/schema" in result.stdout


def test_type_check_rejects_what_grafana_would_not_load(validator_installed: Path, tmp_path: Path) -> None:
    """The validator is only worth something if it fails: a misspelt key and an unknown enum value."""
    dashboard = json.loads((DASHBOARDS_DIR / "ragpulse-judge.json").read_text())
    stat = next(panel for panel in dashboard["panels"] if panel["type"] == "stat")
    stat["options"]["graphMode"] = "sparkline"
    series = next(panel for panel in dashboard["panels"] if panel["type"] == "timeseries")
    series["fieldConfig"]["defaults"]["custom"]["lineWidht"] = 2
    (tmp_path / "broken.json").write_text(json.dumps(dashboard))
    result = run(["node", "check.mjs", str(tmp_path)], cwd=validator_installed)
    assert result.returncode != 0
    assert '"sparkline"' in result.stdout and "lineWidht" in result.stdout, result.stdout


def test_dashboards_query_only_known_metrics_and_recorded_rules() -> None:
    groups = yaml.safe_load(RULES_FILE.read_text())["groups"]
    recorded = {rule["record"] for group in groups for rule in group["rules"] if "record" in rule}
    for name, dashboard in _dashboards().items():
        for expr in _exprs(dashboard):
            for rule in re.findall(r"[a-z_]+:ragpulse_[a-z0-9_:]+", expr):
                assert rule in recorded, f"{name}: {rule} is not a recording rule"
            for metric in re.findall(r"(?<![:a-z_])ragpulse_[a-z0-9_]+", expr):
                base = re.sub(r"_(bucket|sum|count)$", "", metric)
                assert base in KNOWN_METRICS or metric in KNOWN_METRICS, f"{name}: unknown metric {metric}"


def test_quality_dashboard_has_variables_exemplars_and_heatmaps() -> None:
    quality = _dashboards()["ragpulse-quality.json"]
    variables = {v["name"]: v for v in quality["templating"]["list"]}
    assert set(variables) == {"datasource", "tracing", "service", "route", "metric", "sidecar"}
    assert variables["metric"]["query"]["query"].startswith("label_values(ragpulse_evaluations_total")
    assert variables["datasource"]["query"] == "prometheus" and variables["tracing"]["query"] == "tempo"
    panels = {panel["title"]: panel for panel in _panels(quality)}
    for title in ("Faithfulness", "Answer relevancy", "Contextual relevancy", "Hallucination rate"):
        assert title in panels
    heatmaps = [panel for panel in panels.values() if panel["type"] == "heatmap"]
    assert len(heatmaps) >= 4
    assert all(t["exemplar"] for panel in heatmaps for t in panel["targets"])
    assert any(t["exemplar"] for t in panels["Faithfulness"]["targets"])
    for expr in _exprs(quality):
        if "ragpulse_failure" in expr:  # failures are counted per service, metric and cause: no route
            assert 'service=~"$service"' in expr, expr
        elif "ragpulse_evaluation" in expr or ":ragpulse_" in expr:
            assert 'service=~"$service"' in expr and 'route=~"$route"' in expr, expr
    repeated = next(panel for panel in panels.values() if panel.get("repeat") == "metric")
    assert all('metric=~"$metric"' in t["expr"] for t in repeated["targets"])


def test_quality_dashboard_shows_failure_causes_and_links_to_hotspots() -> None:
    quality = _dashboards()["ragpulse-quality.json"]
    panels = {panel["title"]: panel for panel in _panels(quality)}
    causes = panels["Failure causes"]
    assert causes["fieldConfig"]["defaults"]["custom"]["stacking"]["mode"] == "normal"
    (expr,) = [t["expr"] for t in causes["targets"]]
    assert expr.startswith("sum by (cause) (rate(ragpulse_failures_total{")
    assert 'service=~"$service"' in expr and 'metric=~"$metric"' in expr
    top = panels["Top failure causes per service"]
    assert top["type"] == "table" and top["targets"][0]["format"] == "table"
    assert "by (service, cause)" in top["targets"][0]["expr"] and "[$__range]" in top["targets"][0]["expr"]
    assert "service_stage:ragpulse_failure:ratio15m" in panels["Failure share by owner"]["targets"][0]["expr"]
    # Document ids are unbounded, never labels: the hotspots live on ragpulse's own page, one click away.
    hotspots = [link for link in quality["links"] if link["type"] == "link"]
    assert [link["url"] for link in hotspots] == ["${sidecar}/#hotspots"]
    assert hotspots[0]["includeVars"] is False
    assert top["links"] == hotspots
    page = "".join(path.read_text() for path in (REPO / "collector").glob("**/templates/*.html"))
    assert 'id="hotspots"' in page, "the link's anchor is gone from ragpulse's page"


def test_trace_panel_finds_failed_evaluations_of_the_selected_metrics() -> None:
    """The panel searches evaluation spans with the words ragpulse writes on them (the Prometheus outcome)."""
    from collector.exporters import score_label
    from collector.stages import Outcome

    quality = _dashboards()["ragpulse-quality.json"]
    (panel,) = [p for p in _panels(quality) if p["datasource"]["uid"] == "${tracing}"]
    (traceql,) = [t["query"] for t in panel["targets"]]
    assert 'span.gen_ai.evaluation.name =~ "$metric"' in traceql
    assert f'span.gen_ai.evaluation.score.label = "{score_label(Outcome.FAILED)}"' in traceql


def test_judge_dashboard_splits_cost_by_judge_and_model() -> None:
    judge = _dashboards()["ragpulse-judge.json"]
    cost = [expr for expr in _exprs(judge) if "ragpulse_judge_cost_usd_total" in expr]
    assert cost and all('judge=~"$judge", model=~"$model"' in expr for expr in cost)
    assert sum("sum by (judge, model)" in expr for expr in cost) == 2  # the time series and the table


def test_every_panel_reads_its_data_source_from_a_variable() -> None:
    for name, dashboard in _dashboards().items():
        assert dashboard["schemaVersion"] == 41
        for panel in _panels(dashboard):
            assert panel["datasource"]["uid"] in {"${datasource}", "${tracing}"}, f"{name}: {panel['title']}"
            assert panel.get("description"), f"{name}: {panel['title']} has no description"
        ids = [panel["id"] for panel in dashboard["panels"]]
        assert len(ids) == len(set(ids))


def test_provisioning_points_at_the_dashboards_and_links_exemplars_to_tempo() -> None:
    sources = yaml.safe_load((PROVISIONING / "datasources" / "ragpulse.yaml").read_text())["datasources"]
    by_uid = {source["uid"]: source for source in sources}
    assert by_uid[PROVISIONED_PROMETHEUS_UID]["type"] == "prometheus"
    assert by_uid[PROVISIONED_TEMPO_UID]["type"] == "tempo"
    destinations = by_uid[PROVISIONED_PROMETHEUS_UID]["jsonData"]["exemplarTraceIdDestinations"]
    assert destinations == [{"name": "trace_id", "datasourceUid": PROVISIONED_TEMPO_UID}]
    providers = yaml.safe_load((PROVISIONING / "dashboards" / "ragpulse.yaml").read_text())["providers"]
    assert [p["options"]["path"] for p in providers] == ["/var/lib/grafana/dashboards/ragpulse"]


def test_task_panels_plot_registered_metrics_on_the_quality_dashboard() -> None:
    """Ranking, citations, refusals and conversations: each panel's metrics exist in the registry."""
    quality = _dashboards()["ragpulse-quality.json"]
    titles = {panel["title"] for panel in _panels(quality)}
    for title, metrics, _ in TASK_PANELS:
        assert title in titles
        assert set(metrics) <= set(metric_names()), title
    assert any('metric=~"retrieval_hit_rate|retrieval_mrr"' in expr for expr in _exprs(quality))
