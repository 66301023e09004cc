"""/metrics at scale: the exposition writes what prometheus_client writes, off the event loop, one
render at a time; the score histogram's buckets are configurable. (Timings: benchmarks/scrape.py.)"""

from __future__ import annotations

import asyncio
import http.client
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Enum,
    Gauge,
    Histogram,
    Info,
    Summary,
    disable_created_metrics,
    enable_created_metrics,
)
from prometheus_client.core import GaugeHistogramMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from collector.exporters.exposition import Exposition
from collector.exporters.prometheus import PrometheusExporter
from collector.http.status import SharedRender, StatusServer
from collector.labels import LabelPolicy
from collector.metrics import REGISTRY
from collector.records import RagRecord
from collector.stages import Evaluation, Outcome
from testkit.scrape import OPENMETRICS

ACCEPTS = [
    "",  # text 0.0.4
    OPENMETRICS,
    "text/plain; version=1.0.0; escaping=allow-utf-8",
    # Prometheus 3's default: OpenMetrics first, names allowed in UTF-8
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,text/plain;version=0.0.4;q=0.3",
    "application/openmetrics-text; version=1.0.0; escaping=dots",  # the library writes this one
]


class _Custom:
    """A collector of its own (timestamps, a gauge histogram's _gsum/_gcount), read through collect()."""

    def collect(self) -> Iterator[GaugeMetricFamily | GaugeHistogramMetricFamily]:
        gauge = GaugeMetricFamily("custom_temperature", 'Degrees "C"\\ of a\nroom.', labels=["room"])
        gauge.add_metric(["hall"], 21.5, timestamp=1700000000.25)
        gauge.add_metric(["attic"], float("nan"))
        yield gauge
        queue = GaugeHistogramMetricFamily("custom_queue", "Waiting jobs.", labels=["pool"])
        queue.add_metric(["a"], [("1.0", 3.0), ("+Inf", 5.0)], gsum_value=7.0)
        yield queue


def _registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=True)
    counter = Counter("jobs", "Jobs by outcome.", ["outcome", "queue"], registry=registry)
    counter.labels("ok", "a").inc(3, exemplar={"trace_id": "abc"})
    counter.labels("failed", 'quo"te\\back\nline').inc()
    counter.labels("ok", "ünïcode").inc(0)
    scores = Histogram("scores", "Scores.", ["metric"], buckets=(0.5, 1.0), registry=registry)
    scores.labels("faithfulness").observe(0.7, {"trace_id": "t1", "span_id": "s1"})
    scores.labels("relevancy").observe(0.2)
    Histogram("latency_seconds", "Latency.", registry=registry, unit="seconds").observe(3.25)
    Gauge("depth", "Queue depth.", registry=registry).set(1e21)
    Gauge("ratio", "A ratio.", ["kind"], registry=registry).labels("x").set(float("inf"))
    Counter("plain", "No labels.", registry=registry).inc(1234567.0)
    Info("build", "Build.", registry=registry).info({"version": "1.2"})
    Enum("state", "State.", states=["up", "down"], registry=registry).state("down")
    Summary("sizes", "Sizes.", ["kind"], registry=registry).labels("a").observe(5)
    Counter("empty", "A labelled counter with no series yet.", ["x"], registry=registry)
    registry.register(_Custom())
    return registry


def _same(registry: CollectorRegistry, exposition: Exposition, fast: bool = True) -> None:
    """Every Accept header gets the library's bytes; `fast`: written by the exposition itself (where it
    would hand over to the library, `render` raises)."""
    for accept in ACCEPTS:
        encoder, content_type = choose_encoder(accept)
        expected = encoder(registry).decode()
        assert exposition.encode(encoder).decode() == expected, accept
        if fast and "dots" not in accept:
            assert exposition.render("openmetrics" in content_type).decode() == expected, accept


@pytest.mark.parametrize("created", [False, True])
def test_the_exposition_writes_what_prometheus_client_writes(created: bool) -> None:
    registry = _registry()
    exposition = Exposition(registry)
    if created:
        enable_created_metrics()
    try:
        _same(registry, exposition)
        _same(registry, exposition)  # from the texts the first render kept
        jobs = registry._names_to_collectors["jobs"]
        jobs.remove("ok", "a")  # type: ignore[attr-defined]
        jobs.labels("new", "b").inc(2, exemplar={"trace_id": "def"})  # type: ignore[attr-defined]
        jobs.labels("failed", 'quo"te\\back\nline').inc(exemplar={"trace_id": "ghi"})  # type: ignore[attr-defined]
        scores = registry._names_to_collectors["scores"]
        scores.clear()  # type: ignore[attr-defined]  # a new child under the same labels
        scores.labels("faithfulness").observe(0.9)  # type: ignore[attr-defined]
        _same(registry, exposition)
    finally:
        disable_created_metrics()


def test_names_the_exposition_does_not_know_are_written_by_the_library() -> None:
    registry = CollectorRegistry()
    Counter("job:rate", "A recording-rule style name.", ["le_x"], registry=registry).labels("1").inc()
    _same(registry, Exposition(registry), fast=False)
    registry = CollectorRegistry(target_info={"env": "prod"})
    Gauge("up_ish", "Up.", registry=registry).set(1)
    _same(registry, Exposition(registry), fast=False)


def _evaluation(metric: str, score: float, outcome: Outcome = Outcome.PASSED) -> Evaluation:
    return Evaluation(metric, outcome, score, "", 0.5, False, "offline", "m")


def _get(port: int, path: str, accept: str = "") -> tuple[int, str, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers={"Accept": accept} if accept else {})
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read().decode()
    finally:
        connection.close()


def test_metrics_serves_both_formats_with_exemplars_and_the_registry_as_the_library_writes_it() -> None:
    exporter = PrometheusExporter(LabelPolicy(), LabelPolicy())
    record = RagRecord("c" * 32, "d" * 16, "q", "a", service="scrape-test", route="/both")
    exporter.export(record, [_evaluation("faithfulness", 0.83), _evaluation("answer_relevancy", 0.4)])
    server = StatusServer("127.0.0.1", 0, ready=lambda: True)
    server.start()
    try:
        status, content_type, text = _get(server.port, "/metrics")
        assert status == 200 and content_type.startswith("text/plain")
        assert 'ragpulse_evaluation_score_bucket{le="0.9",metric="faithfulness",route="/both"' in text
        assert "ragpulse_evaluations_created" not in text and "_created" not in text
        status, content_type, text = _get(server.port, "/metrics", OPENMETRICS)
        assert content_type.startswith("application/openmetrics-text") and text.endswith("# EOF\n")
        samples = [s for family in text_string_to_metric_families(text) for s in family.samples]
        ours = [s for s in samples if s.labels.get("service") == "scrape-test" and s.exemplar]
        assert {s.name for s in ours} == {"ragpulse_evaluation_score_bucket", "ragpulse_evaluations_total"}
        assert {s.exemplar.labels["trace_id"] for s in ours} == {"c" * 32}
        assert {s.exemplar.labels["span_id"] for s in ours} == {"d" * 16}
    finally:
        server.shutdown()
    _same(REGISTRY, Exposition(REGISTRY))  # the real registry, every family ragpulse declares


async def test_a_render_runs_in_a_worker_thread_one_at_a_time_and_later_scrapes_share_the_next() -> None:
    release, started, threads = threading.Event(), threading.Event(), []

    def render(encoder: object) -> bytes:
        threads.append(threading.current_thread())
        started.set()
        release.wait(10)
        return f"render {len(threads)}".encode()

    shared = SharedRender(render)
    first = asyncio.ensure_future(shared("text", lambda registry: b""))
    await asyncio.to_thread(started.wait, 10)
    # The render holds its thread, not the loop: the loop runs other work meanwhile.
    assert await asyncio.wait_for(asyncio.sleep(0, "the loop is free"), 5) == "the loop is free"
    later = [asyncio.ensure_future(shared("text", lambda registry: b"")) for _ in range(5)]
    await asyncio.sleep(0.05)
    assert len(threads) == 1  # one render at a time: the later scrapes wait for the next one
    release.set()
    assert await first == b"render 1"  # what it began with, before the later scrapes arrived
    assert set(await asyncio.gather(*later)) == {b"render 2"}  # one render, shared by all five
    assert len(threads) == 2 and threading.current_thread() not in threads


def test_while_a_scrape_renders_the_server_answers_other_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    release, rendering = threading.Event(), threading.Event()
    renders = []

    def slow(self: Exposition, encoder: object) -> bytes:
        renders.append(threading.current_thread().name)
        rendering.set()
        release.wait(10)
        return b"slow\n"

    monkeypatch.setattr(Exposition, "encode", slow)
    server = StatusServer("127.0.0.1", 0, ready=lambda: True)
    server.start()
    try:
        with ThreadPoolExecutor(4) as pool:
            scrapes = [pool.submit(_get, server.port, "/metrics") for _ in range(3)]
            assert rendering.wait(10)
            assert _get(server.port, "/healthz")[::2] == (200, "ok\n")  # the server's loop is not held
            release.set()
            assert [s.result(10)[2] for s in scrapes] == ["slow\n"] * 3
        assert 1 <= len(renders) <= 2 and "/metrics" not in renders  # never the server loop's thread
    finally:
        release.set()
        server.shutdown()
