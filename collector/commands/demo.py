"""`ragpulse demo`: the whole product in one process, no Kafka, no API key.

Starts the embedded OTLP/HTTP receiver, the offline judge and /metrics, and a synthetic RAG app
that sends traffic through the real OTLP exporter: mostly grounded answers, some with invented
facts, some contradicting the passages, some off-topic. Prints where to look, a live line per
two seconds with each metric's mean, its direction and its failures (30% of the traffic is bad by
design, so failures are the point, not a fault), and a summary when it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from collector.commands.demo_corpus import TOPICS
from collector.config import Settings
from collector.metrics import EVALUATION_SCORE, EVALUATIONS, FAILURES
from collector.pipeline.service import build, on_signals, serve
from evaluators.metrics.registry import create_metric
from ragpulse_sdk import record_rag

KINDS = (("grounded", 0.7), ("invented", 0.1), ("contradicted", 0.1), ("off_topic", 0.1))


def synthetic_app(
    endpoint: str, rate: float, stop: threading.Event, sent: Counter[str], seed: int = 7
) -> None:
    """A RAG app instrumented with the standard OTLP exporter and ragpulse's `record_rag` helper.

    `sent` counts the answers by kind, so the summary can set the failures beside what was planted."""
    provider = TracerProvider(resource=Resource.create({"service.name": "demo-rag-app"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint), schedule_delay_millis=200)
    )
    tracer = provider.get_tracer("ragpulse.demo")
    rng = random.Random(seed)
    while not stop.wait(1.0 / rate):
        number = rng.randrange(len(TOPICS))
        topic = TOPICS[number]
        kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
        answer = getattr(topic, kind)
        with tracer.start_as_current_span("POST /chat") as root:
            root.set_attribute("http.route", "/chat")
            with tracer.start_as_current_span("answer") as span:
                nodes = [
                    (f"kb-{number}.{i}", text, round(0.9 - 0.1 * i, 2))
                    for i, text in enumerate(topic.passages)
                ]
                record_rag(span, topic.question, nodes, answer, model="demo-llm", route="/chat")
                span.set_attribute("demo.answer_kind", kind)
        sent[kind] += 1
    provider.shutdown()


@cache
def lower_is_better(metric: str) -> bool | None:
    """The metric's direction from its class (hallucination: lower is better); None when unknown
    (a custom metric the registry cannot build without its config)."""
    try:
        return create_metric(metric).lower_is_better
    except Exception:  # any metric the registry cannot build has no known direction
        return None


def arrow(metric: str) -> str:
    return {True: "↓", False: "↑", None: ""}[lower_is_better(metric)]


def direction(metric: str) -> str:
    return {True: "lower is better", False: "higher is better", None: "direction unknown"}[
        lower_is_better(metric)
    ]


@dataclass
class Tally:
    """One metric's totals, read from the process's own Prometheus counters (what /metrics shows)."""

    score_sum: float = 0.0
    scored: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)

    @property
    def mean(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    @property
    def evaluated(self) -> int:
        return sum(self.outcomes.values())


def tallies() -> dict[str, Tally]:
    found: dict[str, Tally] = defaultdict(Tally)
    for family in EVALUATION_SCORE.collect():
        for sample in family.samples:
            tally = found[sample.labels.get("metric", "")]
            if sample.name.endswith("_sum"):
                tally.score_sum += sample.value
            elif sample.name.endswith("_count"):
                tally.scored += int(sample.value)
    for family in EVALUATIONS.collect():
        for sample in family.samples:
            if sample.name.endswith("_total"):
                found[sample.labels.get("metric", "")].outcomes[sample.labels.get("outcome", "")] += int(
                    sample.value
                )
    return {name: tally for name, tally in sorted(found.items()) if tally.evaluated}


def causes() -> Counter[str]:
    counted: Counter[str] = Counter()
    for family in FAILURES.collect():
        for sample in family.samples:
            if sample.name.endswith("_total") and sample.value:
                counted[sample.labels.get("cause", "")] += int(sample.value)
    return counted


def score_line() -> str:
    """`answer_relevancy 0.81↑ 4/40 failed · hallucination 0.22↓ 6/40 failed · ...`"""
    parts = []
    for name, tally in tallies().items():
        mean = "-" if tally.mean is None else f"{tally.mean:.2f}"
        part = f"{name} {mean}{arrow(name)} {tally.outcomes['failed']}/{tally.evaluated} failed"
        other = tally.outcomes["error"] + tally.outcomes["unmeasured"]
        parts.append(part + (f" ({other} not scored)" if other else ""))
    return " · ".join(parts) or "waiting for the first evaluations..."


def summary(elapsed: float, sent: Counter[str], page_url: str | None) -> list[str]:
    """What the run showed, for the end of `--duration` or Ctrl-C: records, failures per metric, causes."""
    found = tallies()
    records = max((t.evaluated for t in found.values()), default=0)
    bad = sent["invented"] + sent["contradicted"] + sent["off_topic"]
    lines = [
        f"ragpulse demo: stopped after {elapsed:.0f} s",
        f"  sent:     {sum(sent.values())} answers ({bad} bad by design: {sent['invented']} invented, "
        f"{sent['contradicted']} contradicted, {sent['off_topic']} off-topic); {records} records scored",
    ]
    width = max((len(name) for name in found), default=6)
    for name, tally in found.items():
        mean = "-" if tally.mean is None else f"{tally.mean:.2f}"
        failed = tally.outcomes["failed"]
        lines.append(
            f"  {name:<{width}}  failed {failed:>4} of {tally.evaluated:<4} mean {mean}  ({direction(name)})"
        )
    top = ", ".join(f"{cause} {n}" for cause, n in causes().most_common(4))
    if top:
        lines.append(f"  causes:   {top} (docs/failure-causes.md)")
    if page_url:
        lines.append(
            f"  look:     {page_url}evaluations?failed=1 lists each failure with its claims and passages"
        )
        lines.append("            while the demo runs (without --duration it runs until Ctrl-C)")
    return lines


def run_demo(settings: Settings, duration: float | None, rate: float) -> int:
    """Run the sidecar on `settings` (embedded receiver, never Kafka) with synthetic traffic."""
    settings = settings.with_values(**{"kafka.bootstrap_servers": None})
    service = build(settings)
    stop_app = threading.Event()
    sent: Counter[str] = Counter()

    async def main() -> None:
        stop, interrupted = asyncio.Event(), asyncio.Event()
        on_signals(interrupted)  # the app stops first, then the sidecar: no exports into a closed port
        runner = asyncio.create_task(serve(service, stop, handle_signals=False))
        while not service.pipeline.ready:
            if runner.done():  # the sidecar could not start (e.g. a port is taken): say why, do not wait
                await runner
            await asyncio.sleep(0.05)
        endpoint = f"http://{settings.otlp.host}:{service.receiver.port}/v1/traces"  # type: ignore[attr-defined]
        base = f"http://{settings.metrics_host}:{service.status.port}/"
        page_url = base if settings.page.enabled else None
        print(f"ragpulse demo: receiving OTLP on {endpoint}")
        print(f"  metrics:  {base}metrics")
        if page_url:
            print(f"  page:     {page_url}")
        print("  judge:    offline (no API key, no network)")
        print(
            f"  traffic:  synthetic RAG app, {rate:g} requests/s: 70% grounded, 10% invented facts, "
            "10% contradicting the passages, 10% off-topic"
        )
        print(
            "  lines:    per metric, the mean score (↑ higher is better, ↓ lower is better) "
            "and failed/evaluated"
        )
        app = threading.Thread(target=synthetic_app, args=(endpoint, rate, stop_app, sent), daemon=True)
        app.start()
        started = time.monotonic()
        try:
            while not runner.done() and not interrupted.is_set():
                left = None if duration is None else duration - (time.monotonic() - started)
                if left is not None and left <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(interrupted.wait(), min(2.0, left if left is not None else 2.0))
                print(f"[{time.monotonic() - started:5.0f}s] {score_line()}", flush=True)
        finally:
            stop_app.set()  # the app flushes its last spans while the receiver still takes them
            await asyncio.to_thread(app.join, 10)
            stop.set()
            await runner
        print("\n".join(summary(time.monotonic() - started, sent, page_url)), flush=True)

    asyncio.run(main())
    return 0
