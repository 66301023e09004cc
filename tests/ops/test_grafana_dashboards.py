"""The committed dashboards are the generator's output, match Grafana's own types, and use real names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from grafana.generator.common import PROVISIONED_PROMETHEUS_UID, PROVISIONED_TEMPO_UID
from grafana.generator.render import DASHBOARDS_DIR, rendered
from tests.ops.tools import GRAFANA, RULES_FILE, require_binary, run

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
    assert set(variables) == {"datasource", "tracing", "service", "route"}
    assert variables["datasource"]["query"] == "prometheus" and variables["tracing"]["query"] == "tempo"
    panels = {panel["title"]: panel for panel in _panels(quality)}
    for title in ("Faithfulness", "Answer relevancy", "Contextual relevancy", "Hallucination rate"):
        assert title in panels
    heatmaps = [panel for panel in panels.values() if panel["type"] == "heatmap"]
    assert len(heatmaps) >= 4
    assert all(t["exemplar"] for panel in heatmaps for t in panel["targets"])
    assert any(t["exemplar"] for t in panels["Faithfulness"]["targets"])
    for expr in _exprs(quality):
        if "ragpulse_evaluation" in expr or ":ragpulse_" in expr:
            assert 'service=~"$service"' in expr and 'route=~"$route"' in expr, expr


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
