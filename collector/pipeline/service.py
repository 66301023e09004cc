"""The composition root: every stage of the sidecar built from `Settings`, in the order data flows.

    receivers -> Pipeline (assemble, extract, sample, queue) -> RecordEvaluator -> exporters
    dead letters beside them; acks released after the exporters flush; the source commits.

Nothing else wires stages together: each takes what it needs as arguments, typed by the
interfaces of `collector.stages`. `serve` runs the result until SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import faulthandler
import logging
import os
import signal
import sys
from dataclasses import dataclass

from collector import __version__
from collector.assembly.assembler import TraceAssembler
from collector.config import Settings
from collector.conventions.unreadable import UnreadableTraces
from collector.exporters.kafka_results import KafkaResultsExporter, recent_results
from collector.exporters.otel_spans import OtelSpanExporter
from collector.exporters.phoenix import PhoenixAnnotationExporter
from collector.exporters.prometheus import PrometheusExporter
from collector.exporters.replay_tally import ReplayTally
from collector.feedback.agreement import FeedbackJoin
from collector.feedback.canary import Canary, build_canary
from collector.feedback.sources import SpanFeedback, topic_receiver
from collector.http.status import StatusServer
from collector.judging.build import build_evaluator
from collector.labels import LabelPolicy, VersionPolicy
from collector.metrics import (
    BUILD_INFO,
)
from collector.page.app import Page
from collector.pipeline.deadletter import KafkaDeadLetters, LogDeadLetters
from collector.pipeline.pipeline import Pipeline
from collector.pipeline.summary import log_summaries
from collector.pipeline.teardown import cancelled
from collector.receivers.forward import OtlpForwarder
from collector.receivers.kafka import KafkaReceiver
from collector.receivers.kafka_options import security_options
from collector.receivers.otlp_grpc import OtlpGrpcReceiver
from collector.receivers.otlp_http import OtlpHttpReceiver
from collector.receivers.replay import KafkaReplayReceiver
from collector.review.fit import FittedThresholds
from collector.sampling.dedup import Answer
from collector.sampling.sampler import Sampler
from collector.stages import DeadLetterSink, EvaluationExporter, Receiver
from evaluators.metrics.registry import create_metric

logger = logging.getLogger(__name__)


@dataclass
class Service:
    settings: Settings
    pipeline: Pipeline
    status: StatusServer
    receivers: list[Receiver]
    canary: Canary | None = None
    tally: ReplayTally | None = None  # a replay's count of what it handed to the exporters

    @property
    def receiver(self) -> Receiver:
        """The first receiver: Kafka (or replay) with Kafka configured, else the OTLP/HTTP one."""
        return self.receivers[0]


def build(settings: Settings, evaluate: bool = True, replay: tuple[int, int] | None = None) -> Service:
    """The service from settings; `evaluate=False` stops after extraction (`ragpulse inspect`);
    `replay=(start_ms, end_ms)` re-reads that range of the Kafka topic instead of joining the group."""
    dead_letters = build_dead_letters(settings)
    receivers = build_receivers(settings, dead_letters, replay)
    feedback = FeedbackJoin(settings.feedback) if evaluate else None  # human feedback vs the judge
    feedback_topic = (
        topic_receiver(settings.feedback, settings.kafka, feedback, dead_letters)
        if feedback and replay is None
        else None
    )
    receivers += [feedback_topic] if feedback_topic is not None else []
    # Pass thresholds refitted on reviewers' corrections: the page fits them, the evaluator applies them.
    thresholds = FittedThresholds(
        LabelPolicy(settings.labels.services, settings.labels.max_values),
        settings.review.scope,
        lambda metric: configured_threshold(settings, metric),
    )
    page = build_page(settings, thresholds) if evaluate else None
    tally = ReplayTally() if replay is not None and evaluate else None
    workers = settings.evaluation.workers
    custom = settings.custom_metrics
    evaluator = (
        build_evaluator(settings.judge, settings.metrics, workers, custom, thresholds) if evaluate else None
    )
    canary = (
        build_canary(settings.canary, evaluator, settings.metrics.options, custom)
        if evaluator is not None and replay is None
        else None
    )
    pipeline = Pipeline(
        receivers=receivers,
        assembler=TraceAssembler(settings.assembly),
        dead_letters=dead_letters,
        sampler=Sampler(settings.sampling, custom=settings.custom_metrics, judge=settings.judge)
        if evaluate
        else None,
        evaluator=evaluator,
        exporters=[*build_exporters(settings, page), feedback.exporter, *([tally] if tally else [])]
        if feedback is not None
        else [],
        config=settings.evaluation,
        log_records=settings.log_records,
        # A replay is asked to score again what production scored: its duplicate filter starts empty
        # (it still drops a generation seen twice within the replayed range).
        already_evaluated=recently_evaluated(settings) if evaluate and replay is None else [],
        extraction=settings.extraction,
        feedback=SpanFeedback(feedback) if feedback is not None and settings.feedback.enabled else None,
        unreadable=UnreadableTraces(LabelPolicy(settings.labels.services, settings.labels.max_values)),
    )
    status = StatusServer(
        settings.metrics_host,
        settings.metrics_port,
        ready=lambda: pipeline.ready,
        alive=lambda: pipeline.alive,
        page=page,
    )
    BUILD_INFO.labels(__version__).set(1)
    return Service(settings, pipeline, status, receivers, canary, tally)


def build_dead_letters(settings: Settings) -> DeadLetterSink:
    """The dead-letter topic beside the spans topic with Kafka; the log without."""
    kafka = settings.kafka
    if not kafka.bootstrap_servers:
        return LogDeadLetters()
    return KafkaDeadLetters(kafka.bootstrap_servers, kafka.dlq_topic, **security_options(kafka.options))


def build_receivers(
    settings: Settings, dead_letters: DeadLetterSink, replay: tuple[int, int] | None = None
) -> list[Receiver]:
    """Kafka (the group, or a replay) when configured; else the embedded OTLP/HTTP receiver (first:
    the demo and tests read its port) and OTLP/gRPC unless its port is -1, then, with
    `otlp.forward.endpoint` set, the forwarder both share: last, so the pipeline starts it with them,
    counts it in /healthz and shuts it down after them (what they accepted last still goes on)."""
    if settings.kafka.bootstrap_servers:
        if replay is not None:
            return [KafkaReplayReceiver(settings.kafka, dead_letters, *replay)]
        return [KafkaReceiver(settings.kafka, dead_letters)]
    otlp = settings.otlp
    forwarder = OtlpForwarder(otlp.forward) if otlp.forward.endpoint else None
    receivers: list[Receiver] = [OtlpHttpReceiver(otlp, dead_letters, forwarder)]
    if otlp.grpc_port >= 0:
        receivers.append(OtlpGrpcReceiver(otlp, dead_letters, forwarder))
    if forwarder is not None:
        receivers.append(forwarder)
    return receivers


def recently_evaluated(settings: Settings) -> list[tuple[Answer, str]]:
    """What the results topic says was scored lately: a restarted replica does not score it twice.

    Only when the results topic is the one exporter that leaves the process: a result there says
    nothing of evaluation spans that were still held for the OTLP endpoint when the process died, and
    skipping their records would lose those spans for good. With both, a restart scores again what was
    not committed (duplicates on the topic, bounded by the uncommitted window) rather than lose any."""
    if not settings.results.bootstrap_servers:
        return []
    if settings.otel_export.endpoint:
        logger.info("duplicate filter not seeded: evaluation spans may have been lost with the last process")
        return []
    keys = recent_results(settings.results, settings.evaluation.dedup_window_s)
    logger.info("duplicate filter seeded with %d recent results", len(keys))
    return keys


def configured_threshold(settings: Settings, metric: str) -> float | None:
    """A metric's pass threshold as the settings make it (None for a name that is no metric)."""
    try:
        options = settings.metrics.options.get(metric, {})
        built = create_metric(metric, custom=settings.custom_metrics, **options)
    except (ValueError, TypeError, KeyError):
        return None
    return float(built.effective_threshold)


def build_page(settings: Settings, thresholds: FittedThresholds | None = None) -> Page | None:
    """The page at / on the metrics port and its store, unless `page.enabled` is false."""
    if not settings.page.enabled:
        return None
    return Page(
        settings.page, settings.results, settings.verdicts, settings.hide_texts, settings.review, thresholds
    )


def build_exporters(settings: Settings, page: Page | None = None) -> list[EvaluationExporter]:
    """Prometheus always (labels bounded by the allow-lists); evaluation spans, the results topic and
    Phoenix annotations when configured; the page's store when there is a page."""
    labels = settings.labels
    exporters: list[EvaluationExporter] = [
        PrometheusExporter(
            LabelPolicy(labels.services, labels.max_values),
            LabelPolicy(labels.routes, labels.max_values),
            labels.max_pairs,
            VersionPolicy.from_config(labels),
            labels.version_from,
        )
    ]
    if settings.otel_export.endpoint:
        exporters.append(OtelSpanExporter(settings.otel_export, settings.verdicts, settings.hide_texts))
    if settings.results.bootstrap_servers:
        results = KafkaResultsExporter(settings.results, settings.verdicts, settings.hide_texts)
        exporters.append(results)
        if page is not None and page.review is not None:  # corrections reach every replica and the export
            page.review.publish = results.publish_correction
    if settings.phoenix.endpoint:
        exporters.append(PhoenixAnnotationExporter(settings.phoenix, settings.verdicts, settings.hide_texts))
    if page is not None:
        exporters.append(page.exporter)
    return exporters


def on_signals(stop: asyncio.Event) -> None:
    """SIGTERM/SIGINT set `stop` (a graceful drain); a second one while draining exits at once, quietly."""
    loop = asyncio.get_running_loop()

    def handle() -> None:
        if stop.is_set():
            print(
                "ragpulse: interrupted again, exiting without finishing the drain; where it was:",
                file=sys.stderr,
                flush=True,
            )
            faulthandler.dump_traceback(sys.stderr, all_threads=True)  # what the drain waited on
            os._exit(130)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, handle)


async def serve(service: Service, stop: asyncio.Event | None = None, handle_signals: bool = True) -> None:
    """Run until `stop`; `handle_signals=False` when the caller owns SIGTERM/SIGINT (the demo does)."""
    stop = stop or asyncio.Event()
    if handle_signals:
        on_signals(stop)
    service.status.start()
    settings = service.settings
    logger.info("metrics on http://%s:%d/metrics", settings.metrics_host, service.status.port)
    if settings.page.enabled:
        logger.info("page on http://%s:%d/", settings.metrics_host, service.status.port)
    judge = "offline" if settings.judge.base_url is None else settings.judge.model
    summaries = (
        asyncio.create_task(log_summaries(settings.summary_interval_s, judge))
        if settings.summary_interval_s > 0
        else None
    )
    # The judge canary re-judges its golden set in a task of its own (never on the ingest path); it
    # stops with `stop`, before the pipeline shuts the judge down behind it.
    canary = asyncio.create_task(service.canary.run(stop)) if service.canary is not None else None
    try:
        await service.pipeline.run(stop)
    finally:
        if canary is not None:
            await cancelled((canary,), "judge canary")
        if summaries is not None:
            summaries.cancel()
        service.status.shutdown()
