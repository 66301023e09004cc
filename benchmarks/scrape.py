"""/metrics at scale: the series one (service, route) pair makes, what a scrape costs, and whether
scraping slows evaluation.

(1) In this process, the registry filled the way production fills it: records of N pairs (100, 200,
1000; services and routes cycle, so 1000 pairs are capped at `labels.max_pairs`) exported through the
Prometheus exporter `collector.pipeline.service` builds, with the evaluations the offline judge gives
them on the default metrics. Then one scrape, as the status server renders it: bytes and the median ms of
`--repeat` renders, text format and OpenMetrics. `before` is the same registry with the old layout (20
score buckets, `_created` series) written by prometheus_client's encoder, which /metrics used.
(2) `ragpulse run` in a subprocess, traffic over OTLP/HTTP, the offline judge: N pairs' series made
first, then a scrape over HTTP while the pipeline is idle, then records/s through the whole pipeline
with a backlog, not scraped (but for the two reads that count) against scraped every 50 ms by a second
client, two runs of each, alternating.

    python -m benchmarks.scrape [--pairs 100 200 1000] [--repeat 7] [--records 2000] [--window 4]

Figures are one machine's, with whatever else ran on it: compare the columns of one run, not runs.
To measure another checkout's pipeline (e.g. the commit before this one), run from its root:
`cd OTHER && python /path/to/benchmarks/scrape.py --skip-registry` (the subprocess imports `collector`
from the working directory).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from prometheus_client import enable_created_metrics
from prometheus_client.exposition import choose_encoder

from testkit.otlp import post_traces
from testkit.process import RagpulseProcess
from testkit.rag_traces import RagCase, encode, make_spans
from testkit.scrape import OPENMETRICS, scrape

if TYPE_CHECKING:
    from collector.stages import Evaluation

TEXT = "text/plain"
FORMATS = {"text": "", "openmetrics": OPENMETRICS}
SERVICES = 50  # as many as labels.max_values lets through: pairs beyond are routes of these services


def pair(i: int) -> tuple[str, str]:
    return f"svc-{i % SERVICES}", f"/route-{i // SERVICES}"


# --- (1) the registry, in this process -------------------------------------------------------------


def judged(count: int) -> list[list[Evaluation]]:
    """The offline judge's evaluations of `count` answers (grounded, partly and not), default metrics."""
    from collector.judging.build import build_evaluator
    from collector.judging.config import JudgeConfig, MetricsConfig
    from collector.records import RagRecord, RetrievedNode
    from collector.sampling.sampler import SamplingConfig

    case = RagCase()
    nodes = tuple(RetrievedNode(node_id, text, score) for node_id, text, score in case.nodes)
    answers = [case.response, "The Eiffel Tower was completed in 1925 by Gustave Eiffel.", "I do not know."]
    evaluator = build_evaluator(JudgeConfig(offline_processes=0), MetricsConfig(), workers=1)
    metrics = SamplingConfig().metrics

    async def judge_all() -> list[list[Evaluation]]:
        records = [
            RagRecord(f"{i:032x}", f"{i:016x}", case.query, f"{answers[i % 3]} ({i})", nodes)
            for i in range(count)
        ]
        return [(await evaluator.evaluate(record, metrics))[0] for record in records]

    try:
        return asyncio.run(judge_all())
    finally:
        evaluator.shutdown()


def fill(pairs: int, evaluations: list[list[Evaluation]]) -> tuple[int, int]:
    """Export one record per pair through the exporter the service builds; (series, labelled pairs)."""
    from collector.config import Settings
    from collector.metrics import REGISTRY
    from collector.pipeline.service import build_exporters
    from collector.records import RagRecord

    for collector in list(REGISTRY._collector_to_names):  # a fresh registry per size
        if hasattr(collector, "clear"):
            collector.clear()
    exporter = build_exporters(Settings())[0]
    for i in range(pairs):
        service, route = pair(i)
        record = RagRecord(f"{i:032x}", f"{i:016x}", "q", "a", service=service, route=route)
        exporter.export(record, evaluations[i % len(evaluations)])
    families = list(REGISTRY.collect())
    labelled = {
        (s.labels["service"], s.labels["route"])
        for family in families
        for s in family.samples
        if s.name == "ragpulse_evaluations_total"
    }
    return sum(len(family.samples) for family in families), len(labelled)


def timed(render: Callable[[], bytes], repeat: int, gap_s: float = 0.0) -> tuple[int, float]:
    """(bytes, median ms) of `repeat` renders, `gap_s` apart."""
    times, size = [], 0
    for _ in range(repeat):
        time.sleep(gap_s)
        start = time.perf_counter()
        size = len(render())
        times.append((time.perf_counter() - start) * 1000)
    return size, statistics.median(times)


@contextmanager
def old_layout() -> Iterator[None]:
    """20 score buckets and `_created` series, as before."""
    from prometheus_client import disable_created_metrics

    from collector.metrics import EVALUATION_SCORE_BUCKETS, SCORE_BUCKETS

    _score_buckets(SCORE_BUCKETS)
    enable_created_metrics()
    try:
        yield
    finally:
        disable_created_metrics()
        _score_buckets(EVALUATION_SCORE_BUCKETS)


def _score_buckets(bounds: tuple[float, ...]) -> None:
    """The score histogram with other bucket bounds: prometheus_client fixes them when a histogram is
    declared, so the benchmark (only) swaps them in place on the empty histogram, as the old layout had."""
    from collector.metrics import EVALUATION_SCORE

    EVALUATION_SCORE.clear()
    EVALUATION_SCORE._prepare_buckets(bounds)  # type: ignore[attr-defined]
    EVALUATION_SCORE._kwargs["buckets"] = bounds  # type: ignore[attr-defined]


def registry_run(sizes: list[int], repeat: int) -> None:
    from collector.exporters.exposition import Exposition
    from collector.metrics import REGISTRY

    evaluations = judged(9)
    exposition = Exposition(REGISTRY)
    print(f"(1) one scrape, in this process (median of {repeat} renders; the machine was shared)")
    print("    before: 20 score buckets and _created series, prometheus_client's encoder (as /metrics was)")
    print("    buckets: the new layout (10 buckets, no _created), prometheus_client's encoder")
    print("    after: the new layout, collector.exporters.exposition.Exposition (as /metrics is)")
    header = "  ".join(f"{name + ' bytes':>17} {'ms':>6}" for name in FORMATS)
    print(f"    {'pairs':>5} {'labelled':>8} {'layout':>7} {'series':>6} {'/pair':>5}  {header}")
    for size in sizes:
        for layout in ("before", "buckets", "after"):
            with old_layout() if layout == "before" else contextlib.nullcontext():
                series, pairs = fill(size, evaluations)
                cells = []
                for accept in FORMATS.values():
                    encoder, _ = choose_encoder(accept)
                    if layout == "after":
                        exposition.encode(encoder)  # the label texts a server keeps from its last scrape
                        size_b, ms = timed(lambda e=encoder: exposition.encode(e), repeat)  # type: ignore[misc]
                    else:
                        size_b, ms = timed(lambda e=encoder: e(REGISTRY), repeat)  # type: ignore[misc]
                    cells.append(f"{size_b:>17,} {ms:>6.1f}")
                row = f"{size:>5} {pairs:>8} {layout:>7} {series:>6} {series / pairs:>5.0f}"
                print(f"    {row}  " + "  ".join(cells))


# --- (2) the pipeline, in a subprocess -------------------------------------------------------------


def traces(start: int, count: int, pairs: int, per_request: int = 50) -> list[bytes]:
    """OTLP requests of `per_request` distinct answers each, the pairs in turn."""
    bodies = []
    for first in range(start, start + count, per_request):
        spans = []
        for i in range(first, min(first + per_request, start + count)):
            case = RagCase()
            case.query, case.response = f"{case.query} (request {i})", f"{case.response} Request {i}."
            service, case.route = pair(i % pairs)
            spans += make_spans("ragpulse", case, service=service)
        bodies.append(encode(spans))
    return bodies


def evaluated(port: int) -> float:
    return scrape(port).value("ragpulse_evaluations_total", metric="faithfulness")


def send(ragpulse: RagpulseProcess, bodies: list[bytes]) -> None:
    for body in bodies:
        assert post_traces(ragpulse.otlp_port, body)[0] == 200


def wait_for(ragpulse: RagpulseProcess, count: float, timeout_s: float = 600) -> None:
    """Until `count` faithfulness evaluations are on /metrics (read once a second: not measured)."""
    deadline = time.monotonic() + timeout_s
    while evaluated(ragpulse.metrics_port) < count and time.monotonic() < deadline:
        time.sleep(1.0)


def steady_rate(ragpulse: RagpulseProcess, window_s: float, backlog_end: float) -> tuple[float, bool]:
    """Records/s between two reads of /metrics `window_s` apart (a second after the backlog was sent),
    and whether records still waited at the end (else the window saw the queue run dry: too few)."""
    time.sleep(1.0)
    first, start = evaluated(ragpulse.metrics_port), time.monotonic()
    time.sleep(window_s)
    last, end = evaluated(ragpulse.metrics_port), time.monotonic()
    return (last - first) / (end - start), last < backlog_end


@contextmanager
def scraper(port: int, every_s: float) -> Iterator[list[float]]:
    """A second client reading /metrics (OpenMetrics, as Prometheus) every `every_s`; its ms per scrape."""
    stop, times = threading.Event(), []

    def run() -> None:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Accept": OPENMETRICS})
        while not stop.is_set():
            start = time.perf_counter()
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()
            times.append((time.perf_counter() - start) * 1000)
            stop.wait(every_s)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield times
    finally:
        stop.set()
        thread.join()


def pipeline_run(pairs: int, records: int, repeat: int, window_s: float) -> None:
    print(f"(2) `ragpulse run` (offline judge, 5 metrics) with {pairs} pairs on /metrics")
    with RagpulseProcess(
        "--quiet-period", "0.1", env={"RAGPULSE_EVALUATION__QUEUE_SIZE": str(records * 2)}
    ) as ragpulse:
        send(ragpulse, traces(0, pairs, pairs))
        wait_for(ragpulse, pairs)
        for name, accept in FORMATS.items():
            request = urllib.request.Request(f"{ragpulse.metrics_url}/metrics", headers={"Accept": accept})
            # A second apart, as Prometheus scrapes: back to back, a scrape also waits out the rest the
            # status server takes after a render (three times the render).
            size, ms = timed(lambda r=request: urllib.request.urlopen(r, timeout=30).read(), repeat, 1.0)  # type: ignore[misc]
            print(
                f"    GET /metrics ({name}) a second apart, pipeline idle: {size:,} bytes, median {ms:.0f} ms"
            )
        print(f"    records/s over {window_s:g} s, {records} records waiting (two reads of /metrics count):")
        done = pairs
        for scraped in (False, True, False, True):
            send(ragpulse, traces(done, records, pairs))
            if scraped:
                with scraper(ragpulse.metrics_port, 0.05) as times:
                    rate, busy = steady_rate(ragpulse, window_s, done + records)
                median = statistics.median(times)
                how = f"scraped 50 ms after each answer: {len(times)} scrapes, {median:.0f} ms each (+ rest)"
            else:
                rate, busy = steady_rate(ragpulse, window_s, done + records)
                how = "not scraped"
            ran_out = "" if busy else "  (the backlog ran out: raise --records)"
            print(f"    {rate:6.1f} records/s  {how}{ran_out}")
            done += records
            wait_for(ragpulse, done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, nargs="+", default=[100, 200, 1000])
    parser.add_argument("--repeat", type=int, default=7, help="renders per figure (the median is shown)")
    parser.add_argument("--records", type=int, default=2000, help="backlog per throughput figure")
    parser.add_argument("--window", type=float, default=4.0, help="seconds each throughput figure spans")
    parser.add_argument("--pipeline-pairs", type=int, default=200)
    parser.add_argument("--skip-registry", action="store_true")
    parser.add_argument("--skip-pipeline", action="store_true")
    args = parser.parse_args()
    if not args.skip_registry:
        registry_run(args.pairs, args.repeat)
    if not args.skip_pipeline:
        pipeline_run(args.pipeline_pairs, args.records, args.repeat, args.window)


if __name__ == "__main__":
    main()
