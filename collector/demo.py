"""`ragpulse demo`: the whole product in one process, no Kafka, no API key.

Starts the embedded OTLP/HTTP receiver, the offline judge and /metrics, and a synthetic RAG app
that sends traffic through the real OTLP exporter: mostly grounded answers, some with invented
facts, some contradicting the passages, some off-topic. Prints where to look and a live line of
scores per metric.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
from collections import defaultdict

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from collector.config import Settings
from collector.demo_corpus import TOPICS
from collector.metrics import EVALUATION_SCORE
from collector.service import build, on_signals, serve
from ragpulse_sdk import record_rag

KINDS = (("grounded", 0.7), ("invented", 0.1), ("contradicted", 0.1), ("off_topic", 0.1))


def synthetic_app(endpoint: str, rate: float, stop: threading.Event, seed: int = 7) -> None:
    """A RAG app instrumented with the standard OTLP exporter and ragpulse's `record_rag` helper."""
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
    provider.shutdown()


def _score_line() -> str:
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for metric in EVALUATION_SCORE.collect():
        for sample in metric.samples:
            name = sample.labels.get("metric", "")
            if sample.name.endswith("_sum"):
                sums[name][0] += sample.value
            elif sample.name.endswith("_count"):
                sums[name][1] += sample.value
    parts = [
        f"{name}={total / count:.2f} (n={int(count)})"
        for name, (total, count) in sorted(sums.items())
        if count
    ]
    return "  ".join(parts) or "waiting for the first evaluations..."


def run_demo(settings: Settings, duration: float | None, rate: float) -> int:
    """Run the sidecar on `settings` (embedded receiver, never Kafka) with synthetic traffic."""
    settings = settings.with_values(**{"kafka.bootstrap_servers": None})
    service = build(settings)
    stop_app = threading.Event()

    async def main() -> None:
        stop, interrupted = asyncio.Event(), asyncio.Event()
        on_signals(interrupted)  # the app stops first, then the sidecar: no exports into a closed port
        runner = asyncio.create_task(serve(service, stop, handle_signals=False))
        while not service.pipeline.ready:
            if runner.done():  # the sidecar could not start (e.g. a port is taken): say why, do not wait
                await runner
            await asyncio.sleep(0.05)
        endpoint = f"http://{settings.otlp.host}:{service.receiver.port}/v1/traces"  # type: ignore[attr-defined]
        print(f"ragpulse demo: receiving OTLP on {endpoint}")
        print(f"  metrics:  http://{settings.metrics_host}:{service.status.port}/metrics")
        if settings.page.enabled:
            print(f"  page:     http://{settings.metrics_host}:{service.status.port}/")
        print("  judge:    offline (no API key, no network)")
        print(
            f"  traffic:  synthetic RAG app, {rate:g} requests/s: 70% grounded, 10% invented facts, "
            "10% contradicting the passages, 10% off-topic"
        )
        app = threading.Thread(target=synthetic_app, args=(endpoint, rate, stop_app), daemon=True)
        app.start()
        started = time.monotonic()
        try:
            while not runner.done() and not interrupted.is_set():
                left = None if duration is None else duration - (time.monotonic() - started)
                if left is not None and left <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(interrupted.wait(), min(2.0, left if left is not None else 2.0))
                print(f"[{time.monotonic() - started:5.0f}s] {_score_line()}", flush=True)
        finally:
            stop_app.set()  # the app flushes its last spans while the receiver still takes them
            await asyncio.to_thread(app.join, 10)
            stop.set()
            await runner

    asyncio.run(main())
    return 0
