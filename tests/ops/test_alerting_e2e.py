"""From hallucinated answers to a page: ragpulse -> Prometheus -> rules -> Alertmanager -> webhook.

A real `ragpulse run` (embedded OTLP receiver, offline judge) receives a burst of RAG traces whose answers
invent facts; a real Prometheus scrapes it every second with exemplar storage on and evaluates the shipped
rules (only `for:` shortened); the shipped Alertmanager example routes the page to a webhook served here.
The page is the grounding SLO's fast burn (every answer failing burns the 5% budget at 20x); the
fixed-threshold hallucination spike fires too, as a warning that the page inhibits.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from collector.commands.demo_corpus import TOPICS
from testkit.process import RagpulseProcess
from testkit.rag_traces import topic_attributes
from tests.ops.prom_stack import (
    Server,
    WebhookReceiver,
    render_rules,
    start_alertmanager,
    start_prometheus,
    wait_until,
)
from tests.ops.tools import GRAFANA, RULES_FILE, require_binary

pytestmark = [pytest.mark.prometheus, pytest.mark.timeout(300)]

ALERT = "RagpulseGroundingBudgetFastBurn"
SPIKE = "RagpulseHallucinationSpike"
GROUNDING = 'metric=~"faithfulness|hallucination",outcome=~"passed|failed"'


def _send_hallucinated_traces(otlp_port: int, count: int, per_second: float) -> set[str]:
    """RAG spans carrying ragpulse's own attributes, sent like an app does; returns their trace ids."""
    exporter = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{otlp_port}/v1/traces")
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": "shop-assistant"}))
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=200))
    tracer = tracer_provider.get_tracer("e2e")
    trace_ids = set()
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        with tracer.start_as_current_span("answer") as span:
            span.set_attributes(topic_attributes(topic, grounded=False, route="/ask"))
            trace_ids.add(format(span.get_span_context().trace_id, "032x"))
        time.sleep(1 / per_second)
    tracer_provider.shutdown()
    return trace_ids


def _firing(prometheus: Server, name: str = ALERT) -> list[dict]:
    alerts = prometheus.get("/api/v1/alerts")["data"]["alerts"]
    return [a for a in alerts if a["labels"]["alertname"] == name and a["state"] == "firing"]


@pytest.fixture
def webhook() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver()
    yield receiver
    receiver.close()


@pytest.fixture
def stack(tmp_path: Path, webhook: WebhookReceiver) -> Iterator[tuple[RagpulseProcess, Server, Server]]:
    prometheus_bin = require_binary("prometheus", "apt-get install prometheus")
    alertmanager_bin = require_binary("prometheus-alertmanager", "apt-get install prometheus-alertmanager")
    servers: list[Server] = []
    with RagpulseProcess("--quiet-period", "0.5") as ragpulse:
        try:
            servers.append(start_alertmanager(alertmanager_bin, tmp_path, webhook.url))
            rules = render_rules(tmp_path / "ragpulse.rules.yml", for_duration="2s")
            servers.append(
                start_prometheus(
                    prometheus_bin,
                    tmp_path,
                    f"127.0.0.1:{ragpulse.metrics_port}",
                    f"127.0.0.1:{servers[0].port}",
                    rules,
                )
            )
            yield ragpulse, servers[1], servers[0]
        finally:
            for server in reversed(servers):
                server.stop()


def test_hallucination_burst_pages_through_alertmanager_with_trace_exemplars(
    stack: tuple[RagpulseProcess, Server, Server], webhook: WebhookReceiver
) -> None:
    ragpulse, prometheus, alertmanager = stack
    wait_until(
        lambda: any(t["health"] == "up" for t in prometheus.get("/api/v1/targets")["data"]["activeTargets"]),
        30,
        "Prometheus scraping ragpulse",
    )
    started = time.time()
    # A steady stream, so the counters grow across many scrapes (increase() needs two samples of a series).
    sent = _send_hallucinated_traces(ragpulse.otlp_port, count=60, per_second=6)

    try:
        firing = wait_until(lambda: _firing(prometheus), 120, f"{ALERT} firing in Prometheus")
    except AssertionError:
        query = prometheus.get("/api/v1/query", query="ragpulse_evaluations_total")["data"]["result"]
        pytest.fail(f"{ALERT} never fired; evaluations in Prometheus: {query}\n{ragpulse.output()[-3000:]}")
    # The burn rate: about 70% of these answers' grounding evaluations fail, 14x the 5% budget (the 6 h /
    # 30 min pair pages from 6x; the 1 h / 5 min pair needs 14.4x).
    assert float(firing[0]["value"]) > 6
    runbook = firing[0]["annotations"]["runbook_url"]
    assert runbook.endswith("/docs/runbooks/slo.md#ragpulsegroundingbudgetfastburn")

    # Every grounding evaluation ragpulse counted is in the SLO's window, those made before Prometheus'
    # first sample of each series included (increase() alone loses them), once the last ones are scraped.
    def window_holds_every_count() -> bool:
        queries = (
            "service:ragpulse_grounding_slo_decided:increase1h",
            f"sum(ragpulse_evaluations_total{{{GROUNDING}}})",
        )
        window, counters = (prometheus.get("/api/v1/query", query=q)["data"]["result"] for q in queries)
        return bool(window) and window[0]["value"][1] == counters[0]["value"][1]

    wait_until(window_holds_every_count, 60, "the SLO window holding every evaluation counted")

    exemplars = prometheus.get(
        "/api/v1/query_exemplars",
        query='ragpulse_evaluation_score_bucket{metric="faithfulness"}',
        start=str(started - 60),
        end=str(time.time() + 60),
    )["data"]
    exemplar_trace_ids = {e["labels"]["trace_id"] for series in exemplars for e in series["exemplars"]}
    assert exemplar_trace_ids, "no exemplars stored: is ragpulse serving OpenMetrics with exemplars?"
    assert all(re.fullmatch(r"[0-9a-f]{32}", trace_id) for trace_id in exemplar_trace_ids)
    assert exemplar_trace_ids <= sent

    wait_until(lambda: ALERT in webhook.alert_names(), 60, "the webhook to receive the page")
    page = next(n for n in webhook.notifications for a in n["alerts"] if a["labels"]["alertname"] == ALERT)
    assert page["receiver"] == "ragpulse-pager" and page["status"] == "firing"

    # The fixed-threshold spike fires as a warning, and Alertmanager mutes it behind the page.
    wait_until(lambda: _firing(prometheus, SPIKE), 60, f"{SPIKE} firing in Prometheus")

    def spike_state() -> str | None:
        alerts = alertmanager.get("/api/v2/alerts")
        return next((a["status"]["state"] for a in alerts if a["labels"]["alertname"] == SPIKE), None)

    wait_until(lambda: spike_state() == "suppressed", 60, f"{SPIKE} inhibited by {ALERT}")

    # The same answers, grouped by owner: invented facts with the right passages are the generator's.
    shares = prometheus.get("/api/v1/query", query="service_stage:ragpulse_failure:ratio15m")["data"][
        "result"
    ]
    stages = {sample["metric"]["stage"]: float(sample["value"][1]) for sample in shares}
    assert stages.get("generation", 0) > stages.get("retrieval", 0), stages


def test_every_dashboard_query_is_valid_promql(stack: tuple[RagpulseProcess, Server, Server]) -> None:
    """Grafana would show an error panel for a query Prometheus cannot parse; ask the real parser."""
    _, prometheus, _ = stack
    substitutions = {"$__rate_interval": "1m", "$__range": "5m"}
    for path in sorted((GRAFANA / "dashboards").glob("*.json")):
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                if "expr" not in target:
                    continue
                expr = target["expr"]
                for placeholder, value in substitutions.items():
                    expr = expr.replace(placeholder, value)
                expr = re.sub(r"\$[a-z_]+", ".*", expr)
                answer = prometheus.get("/api/v1/query", query=expr)
                assert answer["status"] == "success", f"{path.name} / {panel['title']}: {expr}"


def _post_alerts(alertmanager: Server, alerts: list[dict[str, str]]) -> None:
    """Send firing alerts with these labels, as Prometheus does."""
    body = json.dumps([{"labels": labels} for labels in alerts]).encode()
    request = urllib.request.Request(
        f"{alertmanager.url}/api/v2/alerts", data=body, headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(request, timeout=10).close()


def test_a_stalled_instance_mutes_only_the_services_it_evaluates(
    tmp_path: Path, webhook: WebhookReceiver
) -> None:
    """The shipped inhibition is scoped per service: a stall alert for service chat mutes chat's quality
    alerts and nobody else's (with `equal: []`, one stalled replica muted every service)."""
    alertmanager_bin = require_binary("prometheus-alertmanager", "apt-get install prometheus-alertmanager")
    alertmanager = start_alertmanager(alertmanager_bin, tmp_path, webhook.url)
    try:
        common = {"job": "ragpulse", "component": "ragpulse"}
        alerts = [
            {
                "alertname": "RagpulseEvaluationPipelineStalled",
                "instance": "a:9464",
                "service": "chat",
                "severity": "critical",
            },
            {
                "alertname": "RagpulseFaithfulnessDrop",
                "service": "chat",
                "metric": "faithfulness",
                "severity": "warning",
            },
            {
                "alertname": "RagpulseFaithfulnessDrop",
                "service": "search",
                "metric": "faithfulness",
                "severity": "warning",
            },
        ]
        _post_alerts(alertmanager, [{**common, **labels} for labels in alerts])

        def states() -> dict[tuple[str, str], str]:
            return {
                (a["labels"]["alertname"], a["labels"]["service"]): a["status"]["state"]
                for a in alertmanager.get("/api/v2/alerts")
            }

        wait_until(lambda: len(states()) == 3 and "unprocessed" not in states().values(), 30, "processed")
        assert states() == {
            ("RagpulseEvaluationPipelineStalled", "chat"): "active",
            ("RagpulseFaithfulnessDrop", "chat"): "suppressed",
            ("RagpulseFaithfulnessDrop", "search"): "active",
        }
    finally:
        alertmanager.stop()


def test_failures_reach_the_owners_of_their_cause(tmp_path: Path, webhook: WebhookReceiver) -> None:
    """The shipped routing sends retrieval failures to the retrieval owners and generation failures to the
    prompt owners; other warnings still open a ticket. Each notification names the receiver it went to."""
    alertmanager_bin = require_binary("prometheus-alertmanager", "apt-get install prometheus-alertmanager")
    rules = yaml.safe_load(RULES_FILE.read_text())
    static_labels = {r["alert"]: r["labels"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    expected = {
        "RagpulseRetrievalFailures": "ragpulse-retrieval-owners",
        "RagpulseGenerationFailures": "ragpulse-prompt-owners",
        "RagpulseFaithfulnessDrop": "ragpulse-tickets",
    }
    alertmanager = start_alertmanager(alertmanager_bin, tmp_path, webhook.url)
    try:
        _post_alerts(
            alertmanager,
            [{"alertname": name, "service": "chat", **static_labels[name]} for name in expected],
        )

        def receivers() -> dict[str, str]:
            return {
                alert["labels"]["alertname"]: note["receiver"]
                for note in webhook.notifications
                for alert in note["alerts"]
            }

        wait_until(lambda: len(receivers()) == len(expected), 30, "a notification for each alert")
        assert receivers() == expected
    finally:
        alertmanager.stop()
