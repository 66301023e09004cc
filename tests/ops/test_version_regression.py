"""A deploy that makes answers worse: version v1 answers from its passages, v2 invents, the alert names v2.

A real `ragpulse run` (embedded OTLP receiver, offline judge, the page's store in a file) receives RAG
traces of service `shop-assistant` with `service.version` v1 (grounded answers), then v2 (invented
answers); a real Prometheus scrapes it every second and evaluates the shipped rules (only `for:`
shortened). `regression_after_deploy` runs that story and hands back everything a longer test needs
(the process, Prometheus, the store file, the trace ids per version, the firing alert).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from collector.commands.demo_corpus import TOPICS
from testkit.process import RagpulseProcess, free_port
from testkit.rag_traces import topic_attributes
from testkit.scrape import scrape
from tests.ops.prom_stack import Server, render_rules, start_prometheus, wait_until
from tests.ops.tools import GRAFANA, require_binary

pytestmark = [pytest.mark.prometheus, pytest.mark.timeout(300)]

ALERT = "RagpulseVersionRegression"
SERVICE = "shop-assistant"
# The offline judge passes every metric of these topics' grounded answers and fails their invented ones
# on faithfulness (and on hallucination, whose alert may fire too).
GOOD_TOPICS = TOPICS[:3]


@dataclass
class RegressionRun:
    ragpulse: RagpulseProcess
    prometheus: Server
    store_path: Path
    trace_ids: dict[str, set[str]] = field(default_factory=dict)  # version -> trace ids sent
    alert: dict[str, Any] = field(default_factory=dict)  # the firing RagpulseVersionRegression alert


def send_version(otlp_port: int, version: str, grounded: bool, count: int, per_second: float) -> set[str]:
    """RAG spans (ragpulse's own attributes) from an app whose resource says `service.version`."""
    exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{otlp_port}/v1/traces")
    resource = Resource.create({"service.name": SERVICE, "service.version": version})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=200))
    tracer = tracer_provider.get_tracer("e2e")
    trace_ids = set()
    for i in range(count):
        topic = GOOD_TOPICS[i % len(GOOD_TOPICS)]
        with tracer.start_as_current_span("answer") as span:
            span.set_attributes(topic_attributes(topic, grounded, route="/ask"))
            trace_ids.add(format(span.get_span_context().trace_id, "032x"))
        time.sleep(1 / per_second)
    tracer_provider.shutdown()
    return trace_ids


def _firing(prometheus: Server, metric: str | None = None) -> list[dict[str, Any]]:
    alerts = prometheus.get("/api/v1/alerts")["data"]["alerts"]
    return [
        a
        for a in alerts
        if a["labels"]["alertname"] == ALERT
        and a["state"] == "firing"
        and metric in (None, a["labels"]["metric"])
    ]


def _faithfulness_evaluations(ragpulse: RagpulseProcess, version: str) -> float:
    return scrape(ragpulse.metrics_port).value(
        "ragpulse_evaluations_total", metric="faithfulness", service=SERVICE, version=version
    )


@contextmanager
def regression_after_deploy(
    tmp_path: Path, per_version: int = 40, per_second: float = 8, env: dict[str, str] | None = None
) -> Iterator[RegressionRun]:
    """Run v1 (grounded) then v2 (invented) through ragpulse and Prometheus, and wait for the alert.

    `env` adds settings to the ragpulse process (RAGPULSE_...); its page store is `tmp_path/page.db`."""
    prometheus_bin = require_binary("prometheus", "apt-get install prometheus")
    store_path = tmp_path / "page.db"
    settings = {"RAGPULSE_PAGE__STORE_PATH": str(store_path), **(env or {})}
    with RagpulseProcess("--quiet-period", "0.5", env=settings) as ragpulse:
        rules = render_rules(tmp_path / "ragpulse.rules.yml", for_duration="2s")
        # No Alertmanager: the alert's state is read from Prometheus (nothing listens on that port).
        prometheus = start_prometheus(
            prometheus_bin, tmp_path, f"127.0.0.1:{ragpulse.metrics_port}", f"127.0.0.1:{free_port()}", rules
        )
        try:
            wait_until(
                lambda: any(
                    t["health"] == "up" for t in prometheus.get("/api/v1/targets")["data"]["activeTargets"]
                ),
                30,
                "Prometheus scraping ragpulse",
            )
            run = RegressionRun(ragpulse, prometheus, store_path)
            for version, grounded in (("v1", True), ("v2", False)):
                run.trace_ids[version] = send_version(
                    ragpulse.otlp_port, version, grounded, per_version, per_second
                )
                # Every record of this version scored before the next deploy: v2 is first seen after v1.
                wait_until(
                    lambda v=version: _faithfulness_evaluations(ragpulse, v) >= per_version,
                    120,
                    f"{per_version} faithfulness evaluations of {version}",
                )
            try:
                run.alert = wait_until(
                    lambda: _firing(prometheus, "faithfulness"), 120, f"{ALERT} firing for faithfulness"
                )[0]
            except AssertionError:
                query = prometheus.get(
                    "/api/v1/query", query="service_version_metric:ragpulse_evaluations_passed:ratio6h"
                )["data"]["result"]
                log = ragpulse.output()[-3000:]
                pytest.fail(f"{ALERT} never fired; pass ratios by version: {query}\n{log}")
            yield run
        finally:
            prometheus.stop()


@pytest.fixture
def regression_run(tmp_path: Path) -> Iterator[RegressionRun]:
    with regression_after_deploy(tmp_path) as run:
        yield run


def test_the_regression_alert_names_the_new_version(regression_run: RegressionRun) -> None:
    run = regression_run
    labels = run.alert["labels"]
    assert (labels["service"], labels["version"], labels["metric"]) == (SERVICE, "v2", "faithfulness")
    assert labels["owner"] == "generation" and labels["severity"] == "warning"
    assert float(run.alert["value"]) < 0.2  # v2's pass ratio: invented answers fail faithfulness
    assert "regressed in version v2" in run.alert["annotations"]["summary"]
    assert "previous versions 100%" in run.alert["annotations"]["summary"]
    firing = _firing(run.prometheus)
    assert all(a["labels"]["version"] == "v2" for a in firing)
    assert {a["labels"]["metric"] for a in firing} <= {"faithfulness", "hallucination"}

    newest = run.prometheus.get("/api/v1/query", query="service_version:ragpulse_version_newest:first_seen")
    assert [s["metric"]["version"] for s in newest["data"]["result"]] == ["v2"]

    # v1 never failed faithfulness, yet its `failed` series is on /metrics at 0, created with `passed`: the
    # first failure of a known label set is an increase Prometheus sees, not the birth of a series.
    v1 = {"metric": "faithfulness", "service": SERVICE, "version": "v1"}
    outcomes = {
        sample.labels["outcome"]: sample.value
        for sample in scrape(run.ragpulse.metrics_port).samples
        if sample.name == "ragpulse_evaluations_total" and v1.items() <= sample.labels.items()
    }
    assert outcomes["failed"] == 0 and outcomes["passed"] >= len(run.trace_ids["v1"])

    # v2's series were born above 0 (evaluated before Prometheus' first sample of them), yet the 6-hour
    # window counts every one of its evaluations, as ragpulse's counters do.
    def window_holds_every_count() -> bool:
        selector = f'{{service="{SERVICE}",version="v2",metric="faithfulness"}}'
        queries = (
            f"service_version_metric:ragpulse_evaluations_decided:increase6h{selector}",
            f'sum(ragpulse_evaluations_total{{service="{SERVICE}",version="v2",metric="faithfulness",'
            'outcome=~"passed|failed"})',
        )
        window, counters = (run.prometheus.get("/api/v1/query", query=q)["data"]["result"] for q in queries)
        return bool(window) and window[0]["value"][1] == counters[0]["value"][1]

    wait_until(window_holds_every_count, 60, "the 6-hour window holding every evaluation of v2")

    # The page's store keeps each record's version, so failing cases can be picked by version.
    def stored() -> dict[str, str]:
        with sqlite3.connect(run.store_path) as db:
            return dict(db.execute("SELECT trace_id, service_version FROM records").fetchall())

    rows = wait_until(lambda: (s := stored()) and len(s) >= 2 * len(run.trace_ids["v1"]) and s, 30, "stored")
    for version, trace_ids in run.trace_ids.items():
        assert {rows[t] for t in trace_ids} == {version}


def test_the_version_panel_shows_both_versions_side_by_side(regression_run: RegressionRun) -> None:
    """The quality dashboard's version panel, its variables set as a user would, in the real Prometheus."""
    quality = json.loads((GRAFANA / "dashboards" / "ragpulse-quality.json").read_text())
    (panel,) = [p for p in quality["panels"] if p["title"] == "Versions: $metric"]
    variables = {"$service": SERVICE, "$route": ".*", "$metric": "faithfulness"}
    by_query = {}
    for target in panel["targets"]:
        expr = target["expr"]
        for name, value in variables.items():
            expr = expr.replace(name, value)
        result = regression_run.prometheus.get("/api/v1/query", query=expr)["data"]["result"]
        by_query[target["refId"]] = {s["metric"]["version"]: float(s["value"][1]) for s in result}
    pass_ratio, mean_score = by_query["A"], by_query["B"]
    assert set(pass_ratio) == set(mean_score) == {"v1", "v2"}
    assert pass_ratio["v1"] == 1.0 and pass_ratio["v2"] < 0.2
    assert mean_score["v1"] > mean_score["v2"]
